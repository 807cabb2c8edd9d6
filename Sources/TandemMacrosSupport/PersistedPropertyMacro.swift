public import SwiftSyntax
public import SwiftSyntaxMacros
import SwiftSyntaxBuilder

/// The expansion of `@_PersistedProperty(index: N)`, which `@Model` puts on each persisted
/// property.
///
/// - Accessor role: an `init` accessor that initializes the `_name` storage, a `get` that
///   reports the access to the observation registrar and lets the store load a relationship
///   on first use (`persistentWillAccess(N, &_name)`), and a `set` that mutates through the
///   registrar and then reports old and new value (`persistentDidSet(N, from:to:)`; the old
///   value of a relationship is loaded first, so replaced members are detached): change
///   tracking for attributes, inverse maintenance for relationships.
/// - Peer role: the storage itself, `private var _name: Type = initialValue`, with the
///   property's attributes and modifiers dropped.
///
/// On anything but a single stored `var` with a plain name it expands to nothing: `@Model`
/// has already reported the problem.
public protocol PersistedPropertyMacroImplementation: AccessorMacro, PeerMacro {}

extension PersistedPropertyMacroImplementation {
    public static func expansion(
        of node: AttributeSyntax,
        providingAccessorsOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        guard let property = storedProperty(declaration) else {
            return []
        }
        let index = indexArgument(of: node)
        let storage = property.storageName
        let keyPath = "\\.\(property.identifier.text)"
        return [
            """
            @storageRestrictions(initializes: \(raw: storage))
            init(initialValue) {
                \(raw: storage) = initialValue
            }
            """,
            """
            get {
                _$observationRegistrar.access(self, keyPath: \(raw: keyPath))
                persistentWillAccess(\(raw: index), &\(raw: storage))
                return \(raw: storage)
            }
            """,
            """
            set {
                persistentWillAccess(\(raw: index), &\(raw: storage))
                let oldValue = \(raw: storage)
                _$observationRegistrar.withMutation(of: self, keyPath: \(raw: keyPath)) {
                    \(raw: storage) = newValue
                }
                persistentDidSet(\(raw: index), from: oldValue, to: newValue)
            }
            """,
        ]
    }

    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let property = storedProperty(declaration) else {
            return []
        }
        let type = property.type.map { ": \($0.trimmedDescription)" } ?? ""
        let initializer = property.initializer.map { " = \($0.trimmedDescription)" } ?? ""
        return [DeclSyntax(stringLiteral: "private var \(property.storageName)\(type)\(initializer)")]
    }

    /// The property, when `declaration` is something this macro can back with storage.
    private static func storedProperty(_ declaration: some DeclSyntaxProtocol) -> PersistedProperty? {
        guard let variable = declaration.as(VariableDeclSyntax.self),
            case .persisted(let property) = PropertyDeclaration(variable).classify()
        else {
            return nil
        }
        return property
    }

    /// The `index:` argument as written.
    private static func indexArgument(of node: AttributeSyntax) -> String {
        let arguments = node.arguments?.as(LabeledExprListSyntax.self)
        let index = arguments?.first { $0.label?.text == "index" } ?? arguments?.first
        return index?.expression.trimmedDescription ?? "0"
    }
}

/// `@_PersistedProperty`, as run by the tests. The compiler plugin declares its own type of
/// that name.
public enum PersistedPropertyMacro: PersistedPropertyMacroImplementation {}

public import SwiftSyntax
public import SwiftSyntaxMacros
import SwiftDiagnostics
import SwiftSyntaxBuilder

/// The expansion of `@Model`: member, member-attribute and extension roles.
///
/// - Member-attribute role: each persisted property gets `@_PersistedProperty(index: N)`,
///   `N` being its position among the persisted properties.
/// - Member role: `persistentState`, the observation registrar, `schemaMetadata`,
///   `init(persistentRow:)`, `encodePersistentValues(to:)` and `refreshPersistentValues(from:)`,
///   and `originalEntityName` for `@Model(originalName: "Task")`.
///   This role alone reports the diagnostics, so each is reported once.
/// - Extension role: `extension Todo: Tandem.PersistentModel, Observation.Observable {}`,
///   listing only the conformances the compiler asks for.
///
/// The compiler plugin declares its own `ModelMacro` conforming to this protocol, so the
/// plugin and the tests run the very same code.
public protocol ModelMacroImplementation: MemberMacro, MemberAttributeMacro, ExtensionMacro {}

extension ModelMacroImplementation {
    /// The generated members are laid out by ``ModelMembers`` itself.
    public static var formatMode: FormatMode { .disabled }

    public static func expansion(
        of node: AttributeSyntax,
        providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let classDeclaration = declaration.as(ClassDeclSyntax.self) else {
            context.diagnose(Diagnostic(node: node, message: TandemDiagnostic.modelRequiresClass))
            return []
        }
        let isFinal = classDeclaration.modifiers.modifier(.final) != nil
        if !isFinal {
            context.diagnose(finalDiagnostic(for: classDeclaration))
        }
        let model = ModelDeclaration(classDeclaration)
        model.diagnostics.forEach(context.diagnose)
        var originalName: String?
        if let argument = node.arguments?.as(LabeledExprListSyntax.self)?.first(where: { $0.label?.text == "originalName" }) {
            if let value = argument.expression.as(StringLiteralExprSyntax.self)?.representedLiteralValue, !value.isEmpty {
                originalName = value
            } else if argument.expression.as(NilLiteralExprSyntax.self) == nil {
                context.diagnose(Diagnostic(node: argument.expression, message: TandemDiagnostic.originalNameNotLiteral))
            }
        }
        return ModelMembers(model, isFinal: isFinal, originalName: originalName).declarations
    }

    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingAttributesFor member: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AttributeSyntax] {
        guard let classDeclaration = declaration.as(ClassDeclSyntax.self),
            let variable = member.as(VariableDeclSyntax.self)
        else {
            return []
        }
        let property = PropertyDeclaration(variable)
        guard !property.hasPersistedPropertyAttribute,
            case .persisted(let persisted) = property.classify(),
            let index = ModelDeclaration(classDeclaration).index(of: persisted.name)
        else {
            return []
        }
        return ["@_PersistedProperty(index: \(raw: index))"]
    }

    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard declaration.is(ClassDeclSyntax.self), !protocols.isEmpty else {
            return []
        }
        let conformances = protocols.map(qualifiedConformance).joined(separator: ", ")
        return [try ExtensionDeclSyntax("extension \(type.trimmed): \(raw: conformances) {}")]
    }

    /// The module-qualified spelling of a conformance the compiler asks for.
    ///
    /// The compiler lists only the conformances the class still lacks, and does not imply
    /// `Observable` from `PersistentModel` when the macro declares both: each must be
    /// written out.
    private static func qualifiedConformance(_ type: TypeSyntax) -> String {
        let name = type.as(MemberTypeSyntax.self)?.name.text ?? type.trimmedDescription
        switch name {
        case "PersistentModel": return "Tandem.PersistentModel"
        case "Observable": return "Observation.Observable"
        default: return type.trimmedDescription
        }
    }

    /// "@Model classes must be 'final'", with a Fix-It that inserts `final`.
    private static func finalDiagnostic(for classDeclaration: ClassDeclSyntax) -> Diagnostic {
        var modifiers = classDeclaration.modifiers
        modifiers.append(DeclModifierSyntax(name: .keyword(.final, trailingTrivia: .space)))
        return Diagnostic(
            node: classDeclaration.classKeyword,
            message: TandemDiagnostic.modelRequiresFinalClass,
            fixIt: FixIt(
                message: TandemFixIt.insertFinal,
                changes: [.replace(oldNode: Syntax(classDeclaration.modifiers), newNode: Syntax(modifiers))]))
    }
}

/// `@Model`, as run by the tests. The compiler plugin declares its own type of that name.
public enum ModelMacro: ModelMacroImplementation {}

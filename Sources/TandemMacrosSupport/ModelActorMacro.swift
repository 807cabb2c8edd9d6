public import SwiftSyntax
public import SwiftSyntaxMacros
import SwiftSyntaxBuilder
import SwiftDiagnostics

/// The expansion of `@ModelActor`: member and extension roles.
///
/// - Member role: `modelContainer`, `modelContext` and `init(modelContainer:)`, which gives
///   the actor a context of its own on the container.
/// - Extension role: `extension Importer: Tandem.ModelActor {}`.
///
/// On anything but an actor it reports an error and expands to nothing.
public protocol ModelActorMacroImplementation: MemberMacro, ExtensionMacro {}

extension ModelActorMacroImplementation {
    /// The generated members are laid out as written here.
    public static var formatMode: FormatMode { .disabled }

    public static func expansion(
        of node: AttributeSyntax,
        providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard declaration.is(ActorDeclSyntax.self) else {
            context.diagnose(Diagnostic(node: node, message: TandemDiagnostic.modelActorRequiresActor))
            return []
        }
        return [
            "public nonisolated let modelContainer: Tandem.ModelContainer",
            "public let modelContext: Tandem.ModelContext",
            """
            public init(modelContainer: Tandem.ModelContainer) {
                self.modelContainer = modelContainer
                self.modelContext = Tandem.ModelContext(modelContainer)
            }
            """,
        ]
    }

    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard declaration.is(ActorDeclSyntax.self), !protocols.isEmpty else {
            return []
        }
        return [try ExtensionDeclSyntax("extension \(type.trimmed): Tandem.ModelActor {}")]
    }
}

/// `@ModelActor`, as run by the tests. The compiler plugin declares its own type of that name.
public enum ModelActorMacro: ModelActorMacroImplementation {}

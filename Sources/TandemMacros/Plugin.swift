import SwiftCompilerPlugin
import SwiftSyntaxMacros
public import TandemMacrosSupport

// The macro types the declarations in Tandem name (module "TandemMacros"). Each conforms to
// the matching protocol of TandemMacrosSupport, whose extensions hold all the logic.

/// `@Model`.
public enum ModelMacro: ModelMacroImplementation {}
/// `@Attribute(...)`.
public enum AttributeMacro: AttributeMacroImplementation {}
/// `@Transient`.
public enum TransientMacro: TransientMacroImplementation {}
/// `@Relationship(...)`.
public enum RelationshipMacro: RelationshipMacroImplementation {}
/// `@_PersistedProperty(index:)`.
public enum PersistedPropertyMacro: PersistedPropertyMacroImplementation {}
/// `@ModelActor`.
public enum ModelActorMacro: ModelActorMacroImplementation {}

@main
struct TandemMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [
        ModelMacro.self,
        AttributeMacro.self,
        TransientMacro.self,
        RelationshipMacro.self,
        PersistedPropertyMacro.self,
        ModelActorMacro.self,
    ]
}

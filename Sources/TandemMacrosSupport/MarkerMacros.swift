public import SwiftSyntax
public import SwiftSyntaxMacros

/// The expansion of `@Attribute(...)`: nothing. `@Model` reads the attribute's arguments
/// from the property it annotates.
public protocol AttributeMacroImplementation: PeerMacro {}

extension AttributeMacroImplementation {
    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        []
    }
}

/// The expansion of `@Transient`: nothing. `@Model` leaves properties so marked out of the
/// store.
public protocol TransientMacroImplementation: PeerMacro {}

extension TransientMacroImplementation {
    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        []
    }
}

/// The expansion of `@Relationship(...)`: nothing. `@Model` reads its `deleteRule:`,
/// `inverse:` and `originalName:` arguments.
public protocol RelationshipMacroImplementation: PeerMacro {}

extension RelationshipMacroImplementation {
    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        []
    }
}

/// `@Relationship`, as run by the tests. The compiler plugin declares its own type of that name.
public enum RelationshipMacro: RelationshipMacroImplementation {}

/// `@Attribute`, as run by the tests. The compiler plugin declares its own type of that name.
public enum AttributeMacro: AttributeMacroImplementation {}

/// `@Transient`, as run by the tests. The compiler plugin declares its own type of that name.
public enum TransientMacro: TransientMacroImplementation {}

public import SwiftSyntax

/// A stored property that `@Model` saves and fetches, with what `@Attribute` said about it.
public struct PersistedProperty {
    /// The identifier as written, backticks included (`` `default` ``): used in key paths.
    public let identifier: TokenSyntax
    /// The declared type, when there is an annotation.
    public let type: TypeSyntax?
    /// The initial value, when there is one.
    public let initializer: ExprSyntax?
    /// The unlabeled arguments of `@Attribute(...)`, verbatim.
    public let options: [ExprSyntax]
    /// The `originalName:` argument of `@Attribute(...)` or `@Relationship(...)`, verbatim.
    public let originalName: ExprSyntax?
    /// The `deleteRule:` argument of `@Relationship(...)`, verbatim.
    public var deleteRule: ExprSyntax? = nil
    /// The `inverse:` argument of `@Relationship(...)`, verbatim.
    public var inverse: ExprSyntax? = nil

    /// The property's name without backticks: the stored column name.
    public var name: String { identifier.unescapedText }

    /// The backing storage generated next to the property: `_title` for `title`.
    public var storageName: String { "_" + name }
}

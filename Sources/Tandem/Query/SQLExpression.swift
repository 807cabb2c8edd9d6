/// A compiled piece of SQL with its arguments, and what it denotes.
struct SQLExpression {
    enum Kind {
        /// A boolean or scalar value.
        case value
        /// The `NULL` literal.
        case null
        /// The record itself (the predicate's variable).
        case record(alias: String, mapping: EntityMapping)
        /// A composite (or part of one): further key paths select its fields.
        case composite(alias: String, mapping: EntityMapping, layout: CompositeLayout, base: Int32)
        /// A JSON collection column.
        case jsonCollection
        /// A captured Swift value (a sequence for IN, or a scalar).
        case captured(Any)
        /// A to-one relationship: the SQL is the destination's UUID (its foreign key).
        case toOne(destination: EntityMapping)
        /// A to-many relationship: the SQL is the owner's UUID.
        case toMany(relationship: Schema.Relationship, source: EntityMapping, destination: EntityMapping)
    }

    var sql: String
    var arguments: [DatabaseValue]
    var kind: Kind
    /// Whether the SQL value can be NULL (optional attributes), to pick `IS` over `=`.
    var isNullable: Bool
    /// Whether it is a text value (for `contains` on strings).
    var isText: Bool
    /// For a value read across a to-one relationship: the parts of its correlated subquery,
    /// so `x?.name == value` can run as `fk IN (SELECT id … WHERE name = value)` — evaluated
    /// once instead of once per row.
    var hop: Hop?

    /// A class: an expression holds the expressions it was made of.
    final class Hop {
        let link: SQLExpression
        let table: String
        let alias: String
        let inner: SQLExpression
        init(link: SQLExpression, table: String, alias: String, inner: SQLExpression) {
            self.link = link
            self.table = table
            self.alias = alias
            self.inner = inner
        }
    }

    init(_ sql: String, _ arguments: [DatabaseValue] = [], kind: Kind = .value, isNullable: Bool = false, isText: Bool = false) {
        self.sql = sql
        self.arguments = arguments
        self.kind = kind
        self.isNullable = isNullable
        self.isText = isText
    }

    static var null: SQLExpression { SQLExpression("NULL", kind: .null, isNullable: true) }
}

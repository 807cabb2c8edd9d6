/// A description of a store's models: entities, their attributes and how each is stored.
///
/// `Schema` is plain data with no I/O. The store builds it from `@Model` types, writes its
/// canonical JSON into every store file, and compares it with the stored one when a file is
/// opened; tools with no Swift model types (the CLI, the sync server) read it back from JSON.
///
/// ```swift
/// let schema = Schema(entities: [
///     Schema.Entity(name: "Note", attributes: [
///         Schema.Attribute(name: "title", type: .scalar(.string)),
///     ]),
/// ])
/// let json = try schema.canonicalJSON()          // stable bytes: diff two exports cleanly
/// let back = try Schema(canonicalJSON: json)     // == schema
/// ```
public struct Schema: Sendable, Hashable {
    /// The version of the canonical JSON format written by ``canonicalJSON()``.
    ///
    /// Readers refuse a format version they do not know, with ``SchemaError/Code/unsupportedFormatVersion``.
    public static let formatVersion = 1

    /// The entities, in the order the models were declared.
    public var entities: [Entity]

    /// Creates a schema from entity descriptions.
    public init(entities: [Entity]) {
        self.entities = entities
    }

    /// The entity with this name, if any.
    public func entity(named name: String) -> Entity? {
        entities.first { $0.name == name }
    }
}

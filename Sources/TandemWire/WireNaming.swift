public import TandemSchema

/// Column names between a store's schema and the wire: a renamed attribute
/// (`@Attribute(originalName:)`) syncs under its ``Schema/Attribute/identity``, so clients of
/// every model version read and write it under their own name. The identity when nothing
/// was renamed (then no change is copied).
///
/// ```swift
/// let naming = WireNaming(schema: schema)        // Todo.heading, originalName "title"
/// naming.toWire(change).values.keys              // ["title"]
/// naming.fromWire(pulled).values.keys            // ["heading"]
/// ```
public struct WireNaming: Sendable {
    /// Entity → local column → wire column, for the columns whose names differ.
    private let toWireNames: [String: [String: String]]
    /// Entity → wire column → local column.
    private let fromWireNames: [String: [String: String]]

    /// With `formerColumns` (entity → a column's name before a local rename → the name it
    /// syncs under), edits journaled under a former name are sent under the right one too.
    public init(schema: Schema, formerColumns: [String: [String: String]] = [:]) {
        var toWire: [String: [String: String]] = formerColumns
        var fromWire: [String: [String: String]] = [:]
        for entity in schema.entities {
            for attribute in entity.attributes where attribute.identity != attribute.name {
                for column in attribute.columns {
                    let wire = attribute.wireName(of: column)
                    toWire[entity.name, default: [:]][column.name] = wire
                    fromWire[entity.name, default: [:]][wire] = column.name
                }
            }
        }
        toWireNames = toWire
        fromWireNames = fromWire
    }

    /// Whether every column has its own name on the wire.
    public var isIdentity: Bool { toWireNames.isEmpty }

    /// The wire name of `column` of `entity`.
    public func wireColumn(_ column: String, of entity: String) -> String { toWireNames[entity]?[column] ?? column }

    /// The local name of wire column `column` of `entity` (itself when it is not renamed
    /// here, a column of a newer schema included).
    public func localColumn(_ column: String, of entity: String) -> String { fromWireNames[entity]?[column] ?? column }

    /// `change` (local names) as the wire names it.
    public func toWire(_ change: WireChange) -> WireChange { rename(change, toWireNames[change.entity]) }

    /// `change` (wire names) with this store's names.
    public func fromWire(_ change: WireChange) -> WireChange { rename(change, fromWireNames[change.entity]) }

    private func rename(_ change: WireChange, _ names: [String: String]?) -> WireChange {
        guard let names, !change.kind.isLink, change.values.keys.contains(where: { names[$0] != nil }) || change.stamps.keys.contains(where: { names[$0] != nil }) else {
            return change
        }
        var renamed = change
        renamed.values = [:]
        renamed.stamps = [:]
        // Two names of one column in one change (edits journaled under the name before a
        // local rename, and after it): the newer stamp's value.
        let fallback = change.stamps[WireChange.deleteStampKey]
        for (key, value) in change.values {
            let name = names[key] ?? key
            let stamp = change.stamps[key]
            if renamed.values[name] != nil, let other = renamed.stamps[name] ?? fallback, (stamp ?? fallback ?? "") < other { continue }
            renamed.values[name] = value
            renamed.stamps[name] = stamp
        }
        if let fallback { renamed.stamps[WireChange.deleteStampKey] = fallback }
        for (key, stamp) in change.stamps where key != WireChange.deleteStampKey && change.values[key] == nil {
            renamed.stamps[names[key] ?? key] = stamp
        }
        return renamed
    }
}

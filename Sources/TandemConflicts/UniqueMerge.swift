public import TandemSchema
public import TandemWire

/// The unique-value rule (no I/O): two live records of an entity that hold the same value of
/// a `.unique` attribute are one record. The server decides it, in log order, and logs the
/// decision; replicas follow the log.
///
/// - The record with the smaller id survives; the other is the loser.
/// - The loser's values go over to the survivor value by value with their own stamps
///   (last writer wins, as any update: the merge commutes with every other change).
/// - The loser is deleted with ``mergeStamp(loser:now:)``, newer than every stamp it holds,
///   and its later updates go to the survivor; an insert of it newer than the merge makes it
///   a record of its own again.
///
/// ```swift
/// let keys = UniqueMerge(schema: schema)
/// keys.keys(of: "Project", values: ["name": .text("Home")])   // ["name=\"Home\""]
/// UniqueMerge.survivor(of: a, and: b)                        // the smaller id
/// ```
public struct UniqueMerge: Sendable {
    /// Each entity's unique attributes: the attribute's name and its columns.
    public let attributes: [String: [(name: String, columns: [String])]]

    public init(schema: Schema) {
        var attributes: [String: [(name: String, columns: [String])]] = [:]
        for entity in schema.entities {
            let unique = entity.attributes.filter(\.isUnique).map { ($0.name, $0.columns.map(\.name)) }
            if !unique.isEmpty { attributes[entity.name] = unique }
        }
        self.attributes = attributes
    }

    /// Whether `entity` has a unique attribute.
    public func hasUniqueValues(_ entity: String) -> Bool { attributes[entity] != nil }

    /// The unique values `values` hold, one key per unique attribute whose columns are all
    /// present and not null (SQLite lets any number of rows hold NULL in a unique column):
    /// `<attribute>=<JSON of each column's value>`.
    public func keys(of entity: String, values: [String: WireValue]) -> [String] {
        guard let unique = attributes[entity] else { return [] }
        return keys(unique) { values[$0] }
    }

    /// The unique values a live record holds (none for a deleted one). Reads the columns it
    /// needs from the record's fields, building nothing else: the server asks twice per change.
    public func keys(of state: RecordState?) -> [String] {
        guard let state, !state.isDeleted, let unique = attributes[state.entity] else { return [] }
        return keys(unique) { state.fields[$0]?.value }
    }

    private func keys(_ unique: [(name: String, columns: [String])], value: (String) -> WireValue?) -> [String] {
        var keys: [String] = []
        keys.reserveCapacity(unique.count)
        // One buffer per key (the server builds one per new record): no string concatenation.
        var json = WireJSON()
        for (name, columns) in unique {
            json.removeAll()
            json.raw(name)
            json.raw("=")
            var complete = true
            for (index, column) in columns.enumerated() {
                guard let value = value(column), value != .null else { complete = false; break }
                if index > 0 { json.raw(",") }
                json.append(value)
            }
            if complete { keys.append(json.text) }
        }
        return keys
    }

    /// The record that survives a merge of records `a` and `b` (URIs of one entity): the one
    /// with the smaller id, the same on every replica.
    public static func survivor(of a: String, and b: String) -> String {
        let idA = RecordURI(a)?.id ?? a
        let idB = RecordURI(b)?.id ?? b
        return idA == idB ? min(a, b) : (idA < idB ? a : b)
    }

    /// The stamp of the loser's delete: newer than every stamp the loser holds and not older
    /// than `now` (milliseconds since 1970). Node 0 is the server's.
    public static func mergeStamp(loser: RecordState, now: Int64) -> HLCTimestamp {
        stamp(after: ([loser.created, loser.deleted].compactMap { $0 } + loser.fields.values.map(\.stamp)).max() ?? .zero, now: now)
    }

    /// A server stamp (node 0) newer than `newest` and not older than `now`: for a value
    /// the server rewrites (a reference to a merged record, pointed at the survivor), so the
    /// replica that wrote the old one takes the new one.
    public static func stamp(after newest: HLCTimestamp, now: Int64) -> HLCTimestamp {
        let physical = UInt64(max(now, 0))
        if physical > newest.physical { return HLCTimestamp(physical: physical, counter: 0, node: 0) }
        if newest.counter == .max { return HLCTimestamp(physical: newest.physical + 1, counter: 0, node: 0) }
        return HLCTimestamp(physical: newest.physical, counter: newest.counter + 1, node: 0)
    }
}

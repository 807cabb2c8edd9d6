import TandemConflicts
import TandemSchema
import TandemWire

extension WireJSON {
    /// Appends, as log entries at `position`, the changes that make `record` on a replica that
    /// lacks it: the text of ``Routes/changes(making:)`` written to JSON, written straight
    /// from the record's state (no change, dictionary or stamp text is built per record: a
    /// snapshot page of 5 000 records spent more in building them than in reading SQLite).
    /// Returns how many entries it wrote; `separated` says whether one was written before.
    ///
    /// ```swift
    /// var json = WireJSON()
    /// let count = json.appendSnapshot(of: record, position: 42, schemaVersion: 1, separated: false)
    /// ```
    mutating func appendSnapshot(of record: StoredRecord, position: Int64, schemaVersion: Int, separated: Bool) -> Int {
        let state = record.state
        if separated { raw(",") }
        if state.isDeleted {
            let deleted = state.deleted ?? .zero
            let survivor = record.merged.flatMap { $0.stamp == state.deleted ? $0.survivor : nil }
            entry(position, schemaVersion) { json in
                json.head(state.entity, "delete", mergedInto: survivor, record: record.uri)
                json.raw("{\"*\":")
                json.stamp(deleted)
                json.raw("},\"values\":{}}")
            }
            return 1
        }
        // Sorted names, as every change's text has them.
        let fields = state.fields.sorted { $0.key < $1.key }
        let created = state.created ?? state.fields.values.map(\.stamp).max() ?? .zero
        let links = fields.count { $0.key.utf8.contains(UInt8(ascii: "#")) }
        entry(position, schemaVersion) { json in
            json.head(state.entity, "insert", mergedInto: nil, record: record.uri)
            json.raw("{\"*\":")
            json.stamp(created)
            for (name, field) in fields where field.stamp != created && (links == 0 || !name.utf8.contains(UInt8(ascii: "#"))) {
                json.raw(",")
                json.string(name)
                json.raw(":")
                json.stamp(field.stamp)
            }
            json.raw("},\"values\":{")
            var first = true
            for (name, field) in fields where links == 0 || !name.utf8.contains(UInt8(ascii: "#")) {
                if first { first = false } else { json.raw(",") }
                json.string(name)
                json.raw(":")
                json.append(field.value)
            }
            json.raw("}}")
        }
        guard links > 0 else { return 1 }
        // One link or unlink per many-to-many link field, in the order of their fields.
        for (field, value) in fields {
            guard let hash = field.firstIndex(of: "#") else { continue }
            raw(",")
            entry(position, schemaVersion) { json in
                json.head(state.entity, value.value == .bool(true) ? "link" : "unlink", mergedInto: nil, record: record.uri)
                json.raw("{\"*\":")
                json.stamp(value.stamp)
                json.raw("},\"values\":{")
                json.string(String(field[..<hash]))
                json.raw(":")
                json.string(String(field[field.index(after: hash)...]))
                json.raw("}}")
            }
        }
        return 1 + links
    }

    private mutating func entry(_ position: Int64, _ schemaVersion: Int, _ change: (inout WireJSON) -> Void) {
        logEntry(position: position, schemaVersion: schemaVersion, change: change)
    }

    /// A change's members up to its stamps' object (`…"stamps":`), in sorted order.
    private mutating func head(_ entity: String, _ kind: StaticString, mergedInto survivor: String?, record: String) {
        raw("{\"entity\":")
        string(entity)
        raw(",\"kind\":\"")
        raw(kind)
        raw("\"")
        if let survivor {
            raw(",\"mergedInto\":")
            string(survivor)
        }
        raw(",\"record\":")
        string(record)
        raw(",\"stamps\":")
    }
}

public import Foundation
public import TandemSchema
public import TandemWire

/// The server's view of one record: the newest value and HLC stamp of each column, and the
/// newest insert and delete stamps (``RecordMerge`` decides from them).
public struct RecordState: Sendable, Hashable {
    public struct Field: Sendable, Hashable {
        public var value: WireValue
        public var stamp: HLCTimestamp
        public init(value: WireValue, stamp: HLCTimestamp) {
            self.value = value
            self.stamp = stamp
        }
    }

    public var entity: String
    public var fields: [String: Field] = [:]
    /// The newest insert's stamp.
    public var created: HLCTimestamp?
    /// The newest delete's stamp.
    public var deleted: HLCTimestamp?

    public init(entity: String, fields: [String: Field] = [:], created: HLCTimestamp? = nil, deleted: HLCTimestamp? = nil) {
        self.entity = entity
        self.fields = fields
        self.created = created
        self.deleted = deleted
    }

    /// The state of a record made by one insert: each value with its stamp (`stamps` holds
    /// one per value), `created` its creation stamp.
    public init(newRecord entity: String, values: [String: WireValue], stamps: [String: HLCTimestamp], created: HLCTimestamp) {
        self.entity = entity
        fields = Dictionary(uniqueKeysWithValues: values.map { ($0.key, Field(value: $0.value, stamp: stamps[$0.key] ?? created)) })
        self.created = created
    }

    /// The record's column values, without its links (fields `<relationship>#<member>`, see
    /// ``WireChange/linkField``): what a re-insert brings back.
    public var values: [String: Field] {
        fields.filter { !$0.key.contains("#") }
    }

    /// Whether field `column` holds `value` under a stamp newer than `stamp` and than the
    /// newest delete (written again after the delete): a write of the same value older than
    /// that changes nothing, and loses nothing, not even to the delete.
    ///
    /// ```swift
    /// if state.holds("todos#\(member)", .bool(true), newerThan: stamp) { /* the link is there already */ }
    /// ```
    public func holds(_ column: String, _ value: WireValue, newerThan stamp: HLCTimestamp) -> Bool {
        guard let field = fields[column], field.value == value, field.stamp > stamp else { return false }
        return deleted.map { field.stamp > $0 } ?? true
    }

    /// Deleted: the newest delete is newer than the newest insert.
    public var isDeleted: Bool {
        guard let deleted else { return false }
        return created.map { deleted > $0 } ?? true
    }
}

public import TandemSchema
public import TandemWire

/// The server's view of one record: the latest value and HLC stamp of each column, and the
/// delete that removed it, if any.
public struct RecordState: Sendable, Hashable, Codable {
    public struct Field: Sendable, Hashable, Codable {
        public var value: WireValue
        public var stamp: HLCTimestamp
        public init(value: WireValue, stamp: HLCTimestamp) {
            self.value = value
            self.stamp = stamp
        }
    }

    public init(entity: String, fields: [String: Field] = [:], deleted: HLCTimestamp? = nil) {
        self.entity = entity
        self.fields = fields
        self.deleted = deleted
    }

    public var entity: String
    public var fields: [String: Field] = [:]
    /// The stamp of the delete that removed the record, `nil` while it exists.
    public var deleted: HLCTimestamp?
}

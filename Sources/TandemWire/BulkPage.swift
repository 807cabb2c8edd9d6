public import TandemSchema

/// A pull or snapshot page read for a bulk apply (``WireJSONReader/bulkPage(_:dataset:shapes:)``):
/// each entry either a ``Row`` (an insert of every column of a record of an entity the
/// reader was given the ``Shape`` of, its values in the shape's column order, read straight
/// from the JSON without building a change) or the ``LogEntry`` as a pull answer has it.
///
/// ```swift
/// let page = try WireJSONReader.bulkPage(body, dataset: "todos", shapes: [Shape(entity: "Todo", columns: ["done", "title"])])
/// for item in page.items { if case .row(let row) = item { print(row.id, row.values) } }
/// ```
public struct BulkPage: Sendable {
    /// An entity whose plain inserts come as rows: its name and its columns, in the order a
    /// row holds their values.
    public struct Shape: Sendable {
        public let entity: String
        public let columns: [String]
        let entityBytes: [UInt8]
        let columnBytes: [[UInt8]]

        public init(entity: String, columns: [String]) {
            self.entity = entity
            self.columns = columns
            entityBytes = Array(entity.utf8)
            columnBytes = columns.map { Array($0.utf8) }
        }
    }

    /// An insert of every column of record `tandem://<dataset>/<entity>/<id>`.
    public struct Row: Sendable {
        /// The index of its entity's shape.
        public var shape: Int
        /// The record's UUID, lowercase.
        public var id: String
        /// The values, in the shape's column order.
        public var values: [WireValue]
        /// The record's creation stamp (`"*"`), which stamps every value not stamped otherwise.
        public var created: HLCTimestamp
        /// The values stamped otherwise: column index and stamp.
        public var stamps: [(column: Int, stamp: HLCTimestamp)]
        public var position: Int64
        public var schemaVersion: Int

        /// The log entry this row was read from.
        public func entry(dataset: String, shape: Shape) -> LogEntry {
            var texts = ["*": created.description]
            for (column, stamp) in stamps { texts[shape.columns[column]] = stamp.description }
            let change = WireChange(
                record: "tandem://\(dataset)/\(shape.entity)/\(id)", entity: shape.entity, kind: .insert,
                values: Dictionary(uniqueKeysWithValues: zip(shape.columns, values)), stamps: texts)
            return LogEntry(position: position, change: change, schemaVersion: schemaVersion)
        }
    }

    public enum Item: Sendable {
        case row(Row)
        case entry(LogEntry)
    }

    public var items: [Item]
    public var hasMore: Bool
    public var nextCursor: String
    public var serverTime: Int64
}

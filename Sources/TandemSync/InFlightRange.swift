import GRDB

/// The push range being sent, saved before its first batch leaves (at most one row of
/// `tandem_sync_push_range`): a retry after a crash or a lost answer sends the same
/// batches, cut the same way, under the same idempotency keys.
///
/// ```swift
/// try InFlightRange(range, nextBatch: 0).save(db)
/// let saved = try InFlightRange.fetchOne(db)
/// ```
struct InFlightRange: Codable, Sendable, Hashable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "tandem_sync_push_range"

    /// Always 1: the table holds at most one row.
    var id = 1
    /// The `sync` reader's acknowledged token the range was read after: valid only while
    /// it still is.
    var acknowledged: Int64
    /// The range's changes: after this change id, through that one.
    var afterChange: Int64
    var throughChange: Int64
    /// The first batch not answered yet.
    var nextBatch: Int
    /// How the range is cut into batches (the most changes and JSON bytes of one).
    var batchChanges: Int
    var batchBytes: Int

    enum CodingKeys: String, CodingKey, ColumnExpression {
        case id, acknowledged
        case afterChange = "after_change"
        case throughChange = "through_change"
        case nextBatch = "next_batch"
        case batchChanges = "batch_changes"
        case batchBytes = "batch_bytes"
    }

    static let createSQL = """
        CREATE TABLE IF NOT EXISTS tandem_sync_push_range (
            id INTEGER PRIMARY KEY CHECK (id = 1), acknowledged INTEGER NOT NULL, after_change INTEGER NOT NULL,
            through_change INTEGER NOT NULL, next_batch INTEGER NOT NULL, batch_changes INTEGER NOT NULL, batch_bytes INTEGER NOT NULL)
        """

    /// Forgets the saved range (sent, or no longer valid).
    static func clear(_ db: Database) throws {
        try db.execute(sql: "DELETE FROM tandem_sync_push_range")
    }
}

import GRDB

/// How far into a transaction not acknowledged yet the pushes got (at most one row of
/// `tandem_sync_pushed_change`): a bulk import read in slices is acknowledged only once
/// whole, and the slices pushed before are skipped meanwhile.
///
/// ```swift
/// try PushedChange(acknowledged: 41, token: 42, changeID: 7_000).save(db)
/// ```
///
/// Valid only while the acknowledged token is the one it was saved for, and while its
/// transaction still holds that change (``ModelContainer/syncPushedChange(acknowledged:)``).
struct PushedChange: Codable, Sendable, Hashable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "tandem_sync_pushed_change"

    /// Always 1: the table holds at most one row.
    var id = 1
    /// The `sync` reader's acknowledged token when it was saved.
    var acknowledged: Int64
    /// The transaction, and the last of its changes pushed.
    var token: Int64
    var changeID: Int64

    enum CodingKeys: String, CodingKey, ColumnExpression {
        case id, acknowledged, token
        case changeID = "change_id"
    }

    init(acknowledged: Int64, token: Int64, changeID: Int64) {
        self.acknowledged = acknowledged
        self.token = token
        self.changeID = changeID
    }

    static let createSQL = """
        CREATE TABLE IF NOT EXISTS tandem_sync_pushed_change (
            id INTEGER PRIMARY KEY CHECK (id = 1), acknowledged INTEGER NOT NULL, token INTEGER NOT NULL, change_id INTEGER NOT NULL)
        """

    /// Forgets it.
    static func clear(_ db: Database) throws {
        try db.execute(sql: "DELETE FROM tandem_sync_pushed_change")
    }
}

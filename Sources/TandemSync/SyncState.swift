import GRDB

/// The sync engine's own state in the store: one row of `tandem_sync_state`.
///
/// ```swift
/// let cursor = try SyncState.read(db)?.cursor ?? ""
/// try SyncState.update(db) { $0.cursor = page.nextCursor }
/// ```
struct SyncState: Codable, Sendable, Hashable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "tandem_sync_state"

    /// Always 1: the table holds one row.
    var id = 1
    /// The format of the engine's tables (``SyncStore/formatVersion``).
    var formatVersion: Int
    /// This store's id in idempotency keys.
    var clientID: String
    /// The server's pull cursor: where the next pull starts ("" before the first).
    var cursor = ""
    /// When the last sync finished, milliseconds since 1970.
    var lastSync: Int64?
    /// Whether the rows older than the journal were pushed (the first sync's snapshot).
    var snapshotPushed = false
    /// While a resync pushes every record again (the server's data was restored or copied,
    /// ``SyncEngine/resync(schemaVersion:because:)``): the resync's id, in its pushes'
    /// idempotency keys (a restored server may hold the answers of an earlier resync's
    /// keys). Empty otherwise.
    var resync = ""
    /// Whether a pulled change ever merged two records here (a record merged away may still
    /// be named by a later change).
    var everMerged = false
    /// While a bootstrap reads the dataset's snapshot (``SyncEngine/bootstrap()``): 1 into a
    /// store that had no records when it began (nothing to sweep), 2 over records it has (the
    /// store's records the snapshot lacks are deleted); 0 otherwise.
    var bootstrapMode = 0
    /// The token of the snapshot's next page ("" for its first).
    var bootstrap = ""
    /// The URI of the last record of the pages applied: the store's records up to it that
    /// the snapshot lacks were deleted (mode 2).
    var bootstrapSwept = ""
    /// The highest log position this store applied from the log's pages in the history its
    /// cursor is of (0: none, or not known).
    var pulledThrough: Int64 = 0
    /// While a requested resync pulls the log from the start, until it catches up: the log
    /// positions this store had pulled and decided already (its ``pulledThrough`` then). An
    /// older value of those that loses to this store's is no conflict: it was decided, and
    /// logged if it was one, when first pulled (or this store's edit was made after it).
    /// Taken only once the server took the store's cursor of then (``replayCursor``); 0
    /// otherwise.
    var replayThrough: Int64 = 0
    /// The cursor the store had when a requested resync began, until the resync's first page
    /// is in (each pull before asks the server whether it still takes it,
    /// ``SyncEngine/checkReplay()``); "" otherwise.
    var replayCursor = ""
    /// Whether the resync under way was requested (`tandem resync`), not asked for by the
    /// server (a restore, a deleted dataset): its push logs no lost value of another
    /// replica's (that replica logs its own; after a restore it may be gone).
    var resyncRequested = false

    enum CodingKeys: String, CodingKey, ColumnExpression {
        case id
        case formatVersion = "format_version"
        case clientID = "client_id"
        case cursor
        case lastSync = "last_sync"
        case snapshotPushed = "snapshot_pushed"
        case resync
        case everMerged = "ever_merged"
        case bootstrapMode = "bootstrap_mode"
        case bootstrap
        case bootstrapSwept = "bootstrap_swept"
        case pulledThrough = "pulled_through"
        case replayThrough = "replay_through"
        case replayCursor = "replay_cursor"
        case resyncRequested = "resync_requested"
    }

    static let createSQL = """
        CREATE TABLE IF NOT EXISTS tandem_sync_state (
            id INTEGER PRIMARY KEY CHECK (id = 1), format_version INTEGER NOT NULL, client_id TEXT NOT NULL,
            cursor TEXT NOT NULL DEFAULT '', last_sync INTEGER, snapshot_pushed INTEGER NOT NULL DEFAULT 0,
            resync TEXT NOT NULL DEFAULT '', ever_merged INTEGER NOT NULL DEFAULT 0, bootstrap_mode INTEGER NOT NULL DEFAULT 0,
            bootstrap TEXT NOT NULL DEFAULT '', bootstrap_swept TEXT NOT NULL DEFAULT '',
            pulled_through INTEGER NOT NULL DEFAULT 0, replay_through INTEGER NOT NULL DEFAULT 0, replay_cursor TEXT NOT NULL DEFAULT '',
            resync_requested INTEGER NOT NULL DEFAULT 0)
        """

    /// The row; `nil` in a store that never synced (no sync tables yet).
    static func read(_ db: Database) throws -> SyncState? {
        guard try db.tableExists(databaseTableName) else { return nil }
        return try fetchOne(db, key: 1)
    }

    /// Changes the row (made by ``SyncStore/create(_:)``).
    ///
    /// - Throws: a `DatabaseError`, or ``SyncError`` with code `store` when the engine's
    ///   tables were never made.
    static func update(_ db: Database, _ change: (inout SyncState) -> Void) throws {
        guard var state = try read(db) else { throw SyncError(.store, "the store has no sync tables yet") }
        let before = state
        change(&state)
        if state != before { try state.update(db) }
    }
}

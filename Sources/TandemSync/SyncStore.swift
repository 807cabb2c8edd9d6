import Foundation
import GRDB
import TandemSchema
import TandemWire

/// The sync engine's own tables in the store file (format 8, ``SyncState/formatVersion``;
/// until Tandem's first release a store of another format is refused, not upgraded):
///
/// - `tandem_sync_state`: one row (``SyncState``): this store's client id, the pull cursor,
///   when the last sync finished, whether the first sync's snapshot was pushed, the id of a
///   resync under way (every record pushed again after the server's data was restored),
///   whether a merge was ever pulled, and a bootstrap under way (its mode, the token of the
///   snapshot's next page and the last URI swept; ``SyncEngine`` `bootstrap()`).
/// - `tandem_sync_push_range`: the push range being sent (``InFlightRange``), at most one row.
/// - `tandem_sync_pushed_change`: how far into a transaction not acknowledged yet the pushes
///   got (``PushedChange``), at most one row.
/// - `tandem_sync_conflict`: every value that lost, with both values (wire JSON), stamps,
///   the winner (`local`, `remote`, `server`) and the rule.
/// - `tandem_sync_quarantine`: changes waiting for their cause to go away, with the reason:
///   pulled ones that could not be applied (`position` set: retried after every pull) and
///   local ones the server refused (`position` NULL: sent again on every sync, and counted
///   as pending until the server takes them). `record` and `schema_version` say whose
///   change it is and in which schema a pulled one was written.
/// - `tandem_sync_kept(record, field)`: pulled values this store's schema cannot show (an
///   entity or attribute of a newer schema, a many-to-many relationship it lacks, an enum
///   raw value none of its cases): the newest value of each field of each record with its
///   stamp, as a one-field change (`*` is a record's insert or delete). Never shown to the
///   app and not an error (the sync is complete without them); applied, as pulled changes
///   are, by the first sync whose schema has them (``SyncEngine`` `applyKept`).
/// - `tandem_sync_tombstone(entity, id)`: records of referenced entities (targets of a
///   to-one) that a pulled delete removed, so a reference to one that arrives later gets
///   the delete rule instead of pointing nowhere. A pulled re-insert removes it.
///
/// - `tandem_sync_merged(entity, loser, survivor, stamp)`: records the server merged into
///   another because both held the same unique value (a pulled delete with `mergedInto`):
///   references to the loser and pulled changes of it still waiting go to the survivor.
/// - `tandem_sync_moved_link(link_table, source, target, to_source, to_target, stamp)`: a
///   link of this store's, not pushed yet, that applying a merge moved from the loser to
///   the survivor (a row the survivor did not have). Its own write pulled back to the
///   loser's id (the server gave it to that id made again) takes the moved row away, and
///   so does the link answered lost to a delete (``LostLink``).
/// - `tandem_sync_dangling(entity, record, column_name, target, target_entity)`: references
///   a pulled page left pointing at a deleted record, kept with the page; their delete
///   rules are decided once the pull is caught up (a pull cut short leaves them to the next).
///
/// Local changes still to push are the journal's transactions after the `sync` history
/// reader's acknowledged token, less what `pushedChange` says was pushed of the first
/// (``ModelContainer/unpushedHistory()``).
enum SyncStore {
    static let formatVersion = 8
    static let reader = "sync"
    static let author = "sync"

    /// Makes the engine's tables (once) and its state row.
    ///
    /// - Throws: ``SyncError`` with code `store` for sync tables of another format.
    static func create(_ db: Database) throws {
        if try db.tableExists(SyncState.databaseTableName) {
            let columns = try db.columns(in: SyncState.databaseTableName).map(\.name)
            let version =
                columns.contains("format_version")
                ? try Int.fetchOne(db, sql: "SELECT format_version FROM tandem_sync_state") : 2
            if let version, version != formatVersion {
                throw SyncError(
                    .store,
                    "the store's sync tables have format \(version); this Tandem reads format \(formatVersion) only (no upgrade before the first release). Push its changes with the Tandem that made it, then start a new store and sync it"
                )
            }
        }
        try db.execute(
            sql: """
                \(SyncState.createSQL);
                \(InFlightRange.createSQL);
                \(PushedChange.createSQL);
                CREATE TABLE IF NOT EXISTS tandem_sync_conflict (
                    id INTEGER PRIMARY KEY, at INTEGER NOT NULL, record TEXT NOT NULL, attribute TEXT NOT NULL,
                    local_value TEXT, local_stamp TEXT, remote_value TEXT, remote_stamp TEXT,
                    winner TEXT NOT NULL, rule TEXT NOT NULL, survivor TEXT);
                CREATE INDEX IF NOT EXISTS tandem_sync_conflict_record ON tandem_sync_conflict (record, attribute);
                CREATE TABLE IF NOT EXISTS tandem_sync_quarantine (
                    id INTEGER PRIMARY KEY, at INTEGER NOT NULL, position INTEGER, change TEXT NOT NULL, reason TEXT NOT NULL,
                    record TEXT, schema_version INTEGER);
                CREATE TABLE IF NOT EXISTS tandem_sync_kept (
                    record TEXT NOT NULL, field TEXT NOT NULL, stamp TEXT NOT NULL, position INTEGER NOT NULL, schema_version INTEGER,
                    change TEXT NOT NULL, at INTEGER NOT NULL, PRIMARY KEY (record, field)) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS tandem_sync_tombstone (entity TEXT NOT NULL, id TEXT NOT NULL, PRIMARY KEY (entity, id)) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS tandem_sync_merged (
                    entity TEXT NOT NULL, loser TEXT NOT NULL, survivor TEXT NOT NULL, stamp TEXT NOT NULL,
                    PRIMARY KEY (entity, loser)) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS tandem_sync_dangling (
                    id INTEGER PRIMARY KEY, entity TEXT NOT NULL, record TEXT NOT NULL, column_name TEXT NOT NULL, target TEXT NOT NULL,
                    target_entity TEXT NOT NULL, UNIQUE (entity, record, column_name, target));
                CREATE TABLE IF NOT EXISTS tandem_sync_moved_link (
                    link_table TEXT NOT NULL, source TEXT NOT NULL, target TEXT NOT NULL, to_source TEXT NOT NULL, to_target TEXT NOT NULL,
                    stamp TEXT NOT NULL, PRIMARY KEY (link_table, source, target)) WITHOUT ROWID;
                """)
        if try SyncState.fetchOne(db, key: 1) == nil {
            try SyncState(formatVersion: formatVersion, clientID: UUID().uuidString.lowercased()).insert(db)
        }
    }

    /// Keeps references a pulled page left pointing at a deleted record, in the page's own
    /// transaction: their delete rules are decided once the pull has caught up (``takeDangling(_:)``),
    /// and a pull cut before that (a network failure, a cancelled sync, a crash) leaves them
    /// to the next one instead of losing them.
    static func saveDangling(_ dangling: [ChangeApplier.Dangling], _ db: Database) throws {
        guard !dangling.isEmpty else { return }
        let statement = try db.cachedStatement(
            sql: "INSERT OR IGNORE INTO tandem_sync_dangling (entity, record, column_name, target, target_entity) VALUES (?, ?, ?, ?, ?)")
        for candidate in dangling {
            try statement.execute(arguments: [candidate.entity, candidate.id, candidate.column, candidate.target, candidate.targetEntity])
        }
    }

    /// Whether references wait for their delete rules (``saveDangling(_:_:)``).
    static func hasDangling(_ db: Database) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM tandem_sync_dangling)") ?? false
    }

    /// The references kept by ``saveDangling(_:_:)``, in the order they were kept, removed.
    static func takeDangling(_ db: Database) throws -> [ChangeApplier.Dangling] {
        let rows = try Row.fetchAll(db, sql: "SELECT entity, record, column_name, target, target_entity FROM tandem_sync_dangling ORDER BY id")
        try db.execute(sql: "DELETE FROM tandem_sync_dangling")
        return rows.map { ChangeApplier.Dangling(entity: $0[0], id: $0[1], column: $0[2], target: $0[3], targetEntity: $0[4]) }
    }

    /// Logs `conflict`, once: the same two writes (both stamps) meeting again under the same
    /// rule with the same winner, as when a resync pulls the log from the start again, are
    /// the conflict already logged. Returns whether it was logged now.
    @discardableResult
    static func recordConflict(_ conflict: SyncConflict, _ db: Database) throws -> Bool {
        if let local = conflict.localStamp, let remote = conflict.remoteStamp,
            try Bool.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT EXISTS (SELECT 1 FROM tandem_sync_conflict WHERE record = ? AND attribute = ? AND local_stamp = ?
                        AND remote_stamp = ? AND winner = ? AND rule = ?)
                        """),
                arguments: [conflict.record, conflict.attribute, local, remote, conflict.winner.rawValue, conflict.rule]) == true
        {
            return false
        }
        try db.cachedStatement(
            sql: """
                INSERT INTO tandem_sync_conflict (at, record, attribute, local_value, local_stamp, remote_value, remote_stamp, winner, rule, survivor)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [
            conflict.at, conflict.record, conflict.attribute, conflict.localValue, conflict.localStamp,
            conflict.remoteValue, conflict.remoteStamp, conflict.winner.rawValue, conflict.rule, conflict.survivor,
        ])
        return true
    }

    static func quarantine(
        _ change: String, position: Int64?, reason: String, at: Int64, record: String? = nil, schemaVersion: Int? = nil, _ db: Database
    ) throws {
        try db.cachedStatement(sql: "INSERT INTO tandem_sync_quarantine (at, position, change, reason, record, schema_version) VALUES (?, ?, ?, ?, ?, ?)")
            .execute(arguments: [at, position, change, reason, record, schemaVersion])
    }

    /// Keeps field `field` of `record` (a one-field change, `change`) for a schema that can
    /// show it, unless a newer value of the field is kept already (last writer wins, as on
    /// the server).
    static func keep(
        record: String, field: String, stamp: HLCTimestamp, position: Int64, schemaVersion: Int, change: WireChange, at: Int64, _ db: Database
    ) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO tandem_sync_kept (record, field, stamp, position, schema_version, change, at) VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (record, field) DO UPDATE SET stamp = excluded.stamp, position = excluded.position,
                    schema_version = excluded.schema_version, change = excluded.change, at = excluded.at
                WHERE excluded.stamp >= tandem_sync_kept.stamp
                """
        ).execute(arguments: [record, field, stamp.description, position, schemaVersion, WireJSON.data { $0.append(change) }.utf8Text, at])
    }

    /// Forgets the kept fields of `record` stamped at or before `stamp` (its delete).
    static func forgetKept(record: String, through stamp: HLCTimestamp, _ db: Database) throws {
        try db.cachedStatement(sql: "DELETE FROM tandem_sync_kept WHERE record = ? AND stamp <= ?").execute(arguments: [record, stamp.description])
    }

    /// A kept field, as stored.
    struct Kept {
        var record: String
        var field: String
        var position: Int64
        var schemaVersion: Int?
        var change: WireChange?
    }

    /// Every kept field, by record, in log order within a record.
    static func kept(_ db: Database) throws -> [Kept] {
        guard try db.tableExists("tandem_sync_kept") else { return [] }
        return try Row.fetchAll(db, sql: "SELECT record, field, position, schema_version, change FROM tandem_sync_kept ORDER BY record, position, field").map { row in
            let text: String = row[4]
            return Kept(record: row[0], field: row[1], position: row[2], schemaVersion: row[3], change: try? WireJSONReader.change(Data(text.utf8)))
        }
    }

    static func removeKept(record: String, field: String, _ db: Database) throws {
        try db.cachedStatement(sql: "DELETE FROM tandem_sync_kept WHERE record = ? AND field = ?").execute(arguments: [record, field])
    }

    /// How many fields are kept for a schema that can show them.
    static func keptCount(_ db: Database) throws -> Int {
        guard try db.tableExists("tandem_sync_kept") else { return 0 }
        return try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM tandem_sync_kept") ?? 0
    }

    /// A quarantined change, as stored.
    struct Quarantined {
        var id: Int64
        var position: Int64?
        var change: String
        var schemaVersion: Int?

        /// The change read back; `nil` when its text is unreadable (listed, never sent or applied).
        var wireChange: WireChange? { try? WireJSONReader.change(Data(change.utf8)) }
    }

    /// How many changes wait in the quarantine, by kind (one query).
    struct QuarantineCounts {
        /// Local changes the server refused.
        var local = 0
        /// Pulled changes not applied, for a cause that can go away.
        var pulled = 0
        /// Fields kept for a schema that can show them (not in the quarantine: no error).
        var kept = 0
    }

    static func quarantineCounts(_ db: Database) throws -> QuarantineCounts {
        guard try db.tableExists("tandem_sync_quarantine"),
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT total(position IS NULL), total(position IS NOT NULL), (SELECT COUNT(*) FROM tandem_sync_kept)
                    FROM tandem_sync_quarantine
                    """)
        else { return QuarantineCounts() }
        return QuarantineCounts(local: Int(row[0] as Double), pulled: Int(row[1] as Double), kept: row[2])
    }

    /// Quarantined local changes (`pulled: false`, the server refused them) or pulled ones,
    /// oldest first.
    static func quarantined(pulled: Bool, _ db: Database, limit: Int = .max) throws -> [Quarantined] {
        guard try db.tableExists("tandem_sync_quarantine") else { return [] }
        return try Row.fetchAll(
            db,
            sql: """
                SELECT id, position, change, schema_version FROM tandem_sync_quarantine
                WHERE position IS \(pulled ? "NOT NULL" : "NULL") ORDER BY position, id LIMIT ?
                """, arguments: [limit]
        ).map { Quarantined(id: $0[0], position: $0[1], change: $0[2], schemaVersion: $0[3]) }
    }

    /// Whether a pulled insert of `record` waits in the quarantine.
    ///
    /// `pulled` false: an insert this store made, refused by the server (the record is not on
    /// the server).
    static func hasQuarantinedInsert(record: String, pulled: Bool = true, _ db: Database) throws -> Bool {
        let origin = pulled ? "position IS NOT NULL" : "position IS NULL"
        return try Bool.fetchOne(
            db.cachedStatement(sql: #"SELECT 1 FROM tandem_sync_quarantine WHERE record = ? AND "# + origin + #" AND change LIKE '%"kind":"insert"%' LIMIT 1"#),
            arguments: [record]) ?? false
    }

    /// Whether any insert this store made waits in the quarantine, refused by the server.
    static func hasRefusedInsert(_ db: Database) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: #"SELECT 1 FROM tandem_sync_quarantine WHERE position IS NULL AND change LIKE '%"kind":"insert"%' LIMIT 1"#)) ?? false
    }

    static func hasQuarantinedPulled(record: String, _ db: Database) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT 1 FROM tandem_sync_quarantine WHERE record = ? AND position IS NOT NULL LIMIT 1"),
            arguments: [record]) ?? false
    }

    /// Removes quarantined changes by id; returns how many there were.
    @discardableResult
    static func unquarantine(_ ids: [Int64], _ db: Database) throws -> Int {
        var count = 0
        for id in ids {
            try db.cachedStatement(sql: "DELETE FROM tandem_sync_quarantine WHERE id = ?").execute(arguments: [id])
            count += db.changesCount
        }
        return count
    }

    static func conflicts(_ db: Database, limit: Int) throws -> [SyncConflict] {
        guard try db.tableExists("tandem_sync_conflict") else { return [] }
        return try Row.fetchAll(
            db,
            sql: """
                SELECT at, record, attribute, local_value, local_stamp, remote_value, remote_stamp, winner, rule, survivor
                FROM tandem_sync_conflict ORDER BY id DESC LIMIT ?
                """, arguments: [limit]
        ).map { row in
            SyncConflict(
                at: row[0], record: row[1], attribute: row[2], localValue: row[3], localStamp: row[4],
                remoteValue: row[5], remoteStamp: row[6], winner: SyncConflict.Winner(rawValue: row[7]) ?? .remote, rule: row[8],
                survivor: row[9])
        }
    }

    static func quarantined(_ db: Database, limit: Int) throws -> [QuarantinedChange] {
        guard try db.tableExists("tandem_sync_quarantine") else { return [] }
        return try Row.fetchAll(
            db, sql: "SELECT id, at, position, change, reason FROM tandem_sync_quarantine ORDER BY id DESC LIMIT ?",
            arguments: [limit]
        ).map { QuarantinedChange(id: $0[0], at: $0[1], position: $0[2], change: $0[3], reason: $0[4]) }
    }

    /// Remembers (`true`) or forgets (`false`) that a pulled delete removed a record.
    static func setTombstone(_ present: Bool, entity: String, id: String, _ db: Database) throws {
        let sql =
            present
            ? "INSERT OR IGNORE INTO tandem_sync_tombstone (entity, id) VALUES (?, ?)"
            : "DELETE FROM tandem_sync_tombstone WHERE entity = ? AND id = ?"
        try db.cachedStatement(sql: sql).execute(arguments: [entity, id])
    }

    static func hasTombstone(entity: String, id: String, _ db: Database) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM tandem_sync_tombstone WHERE entity = ? AND id = ?"), arguments: [entity, id]) ?? false
    }

    /// Records that the server merged `loser` into `survivor` (both held a unique value) with
    /// a delete stamped `stamp`: a pulled insert of the loser newer than it is a re-insert.
    static func setMerged(entity: String, loser: String, survivor: String, stamp: HLCTimestamp, _ db: Database) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO tandem_sync_merged (entity, loser, survivor, stamp) VALUES (?, ?, ?, ?)
                ON CONFLICT(entity, loser) DO UPDATE SET survivor = excluded.survivor, stamp = max(stamp, excluded.stamp)
                """
        ).execute(arguments: [entity, loser, survivor, stamp.description])
    }

    /// When `loser` was merged (see ``setMerged(entity:loser:survivor:stamp:_:)``).
    static func mergeStamp(entity: String, loser: String, _ db: Database) throws -> HLCTimestamp? {
        try String.fetchOne(db.cachedStatement(sql: "SELECT stamp FROM tandem_sync_merged WHERE entity = ? AND loser = ?"), arguments: [entity, loser])
            .flatMap { HLCTimestamp($0) }
    }

    /// Forgets that `loser` was merged (it was inserted again).
    static func unmerge(entity: String, loser: String, _ db: Database) throws {
        try db.cachedStatement(sql: "DELETE FROM tandem_sync_merged WHERE entity = ? AND loser = ?").execute(arguments: [entity, loser])
    }

    /// The record `id` was merged into, following merges of merges; `nil` when it was not.
    static func survivor(entity: String, id: String, _ db: Database) throws -> String? {
        var current = id
        var seen: Set<String> = [id]
        while let next = try String.fetchOne(
            db.cachedStatement(sql: "SELECT survivor FROM tandem_sync_merged WHERE entity = ? AND loser = ?"),
            arguments: [entity, current]), seen.insert(next).inserted
        {
            current = next
        }
        return current == id ? nil : current
    }

    static func count(_ table: String, _ db: Database) throws -> Int {
        guard try db.tableExists(table) else { return 0 }
        return try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)") ?? 0
    }
}

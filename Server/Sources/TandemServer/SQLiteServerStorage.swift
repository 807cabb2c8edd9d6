public import Foundation
import CFileBirth
import GRDB
import NIOConcurrencyHelpers
import TandemSchema
import TandemSQLite
import TandemWAL
public import TandemWire

/// ``ServerStorage`` in one SQLite database (WAL, GRDB): the server's default, nothing else
/// to install. Every method is one transaction; pushes are serialized by SQLite's writer.
///
/// ```swift
/// let storage = try SQLiteServerStorage(path: "tandem-data/tandem.sqlite")
/// ```
public final class SQLiteServerStorage: ServerStorage {
    /// The version of the database layout, kept in `PRAGMA user_version`: 11. Until the
    /// first release a database of another format is refused, not upgraded (the operator
    /// starts a new data directory). The layout: users (with their own quotas, `NULL` for the
    /// server's default), tokens (with their scope: dataset ids as `"3,7"`, read-only, expiry),
    /// datasets (with the bytes their logs hold; ids never reused, so a deleted dataset's
    /// data, purged in steps through `deleted_datasets`, never reaches a new one; its rows
    /// stay, purged, with the bytes the dataset held, the id and name its stale cursors name),
    /// members,
    /// schema versions;
    /// per dataset its records (each a ``RecordState`` in its binary form), its log (keyed by
    /// dataset and position, entries as pushed: see `WireChange.compacted()`), the values
    /// that lost, the idempotency keys of its pushes, which live record holds each unique
    /// value (`unique_values`), the records merged into another (`merged_records`, with
    /// `remade` when a merged-away id was made again by a newer insert), and which records'
    /// link fields have named each member (`link_members`).
    public static let formatVersion = 13

    let pool: DatabasePool
    public let cursorKey: [UInt8]
    public var epoch: UInt64 { settledEpoch.withLockedValue { $0.value } }
    public let logSignals = LogSignals()
    private let settledEpoch: NIOLockedValueBox<StorageEpoch>
    /// Why this opening started a new epoch (``StorageEpoch``), `nil` when it kept the stored
    /// one: the server logs it.
    public let newEpochReason: String?
    /// Where `tandem-server storage copy` copied this data, and when (`nil`: never copied).
    public let copiedTo: String?
    /// The ``HighWaterMark`` file beside the database.
    private let markPath: String
    private let lastMark = NIOLockedValueBox<HighWaterMark?>(nil)
    private let marker = NIOLockedValueBox<Task<Void, Never>?>(nil)
    /// The epoch and where it was settled (what a copy of this data records it came from).
    public var settled: StorageEpoch { settledEpoch.withLockedValue { $0 } }
    /// Pushes that queue for the writer run together, each in its own savepoint.
    private let committer: GroupCommitter<QueuedPush, StoredPush>

    private struct QueuedPush: Sendable {
        var dataset: Int64
        var key: String
        var requestHash: String
        var now: Int64
        var changes: Int
        var job: PushJob
    }

    /// Opens (creating) the database at `path`.
    ///
    /// - Throws: ``StorageError/unavailable(_:)`` when the file cannot be opened, is not a
    ///   Tandem server database, or was written by a newer server.
    public init(path: String) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        // The group commit never stops to copy the log back into the file (see WALCheckpointer).
        let checkpointer = WALCheckpointer(path: path)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            if !db.configuration.readonly { checkpointer.install(on: db) }
        }
        let pool: DatabasePool
        do {
            pool = try DatabasePool(path: path, configuration: configuration)
            try pool.write { db in try Self.migrate(db) }
            cursorKey = try pool.read { db in
                guard let key = try Data.fetchOne(db, sql: "SELECT key FROM server_keys WHERE name = 'cursor'"), key.count == 32 else {
                    throw StorageError.unavailable("the server database at \(path) has no cursor key; it is damaged")
                }
                return [UInt8](key)
            }
            let identity = Self.identity(of: path)
            let markPath = path + ".mark"
            let mark = (try? String(contentsOfFile: markPath, encoding: .utf8)).flatMap(HighWaterMark.init(text:))
            (settledEpoch, newEpochReason) = try pool.write { db in
                var (epoch, reason) = StorageEpoch.settle(stored: try Self.storedEpoch(db), identity: identity)
                // Rewritten in place from an older copy: the file is the same, the data is not.
                if reason == nil, let restored = mark?.restored(epoch: epoch.value, bytes: try Self.storedBytes(db)) {
                    epoch.value = Cursor.newEpoch()
                    reason = restored
                }
                if reason != nil { try Self.store(epoch, db) }
                return (NIOLockedValueBox(epoch), reason)
            }
            copiedTo = try pool.read { db in
                try Data.fetchOne(db, sql: "SELECT key FROM server_keys WHERE name = 'copied_to'").map { String(decoding: $0, as: UTF8.self) }
            }
        } catch let error as StorageError {
            throw error
        } catch {
            throw StorageError.unavailable("cannot open the server database at \(path): \(error)")
        }
        self.pool = pool
        self.markPath = path + ".mark"
        committer = GroupCommitter(maxBatch: Self.maxPushesPerTransaction, maxWeight: Self.maxChangesPerTransaction, weight: \.changes) { pushes in
            try await pool.write { db in
                pushes.map { push in
                    Result {
                        var stored: StoredPush?
                        try db.inSavepoint {
                            stored = try Self.run(push, db)
                            return .commit
                        }
                        return stored!
                    }
                }
            }
        }
        if let (stored, bytes) = try? pool.read({ db in (try Self.storedEpoch(db), try Self.storedBytes(db)) }) {
            noteMark(stored: stored, bytes: bytes)
        }
    }

    deinit {
        marker.withLockedValue { $0?.cancel() }
    }

    /// After a write: the mark is written again within a second (one refresh for a burst of
    /// writes; nothing runs while nothing is written).
    private func markSoon() {
        marker.withLockedValue { marker in
            guard marker == nil else { return }
            marker = Task { [weak self] in
                try? await Task.sleep(for: .seconds(1))
                guard let self else { return }
                self.marker.withLockedValue { $0 = nil }
                await self.refreshMark()
            }
        }
    }

    /// Writes the ``HighWaterMark`` when it changed (within a second of a write, and when the
    /// server stops), and takes up an epoch another process started in the database
    /// (`storage copy`, `storage new-epoch`).
    public func refreshMark() async {
        // An asynchronous read: a reader may be long in coming, and the waiting must not hold
        // one of Swift concurrency's few threads (seen: every test thread blocked here).
        guard let (stored, bytes) = try? await pool.read({ db in (try Self.storedEpoch(db), try Self.storedBytes(db)) }) else { return }
        noteMark(stored: stored, bytes: bytes)
    }

    private func noteMark(stored: StorageEpoch?, bytes: Int64) {
        let epoch = settledEpoch.withLockedValue { current in
            if let stored, stored.value != current.value { current.value = stored.value }
            return current.value
        }
        let mark = HighWaterMark(epoch: epoch, bytes: bytes)
        guard lastMark.withLockedValue({ $0 }) != mark else { return }
        if (try? Data(mark.text.utf8).write(to: URL(filePath: markPath), options: .atomic)) != nil {
            lastMark.withLockedValue { $0 = mark }
        }
    }

    /// The bytes of changes the datasets hold, held before compaction folded them away, and
    /// held before they were deleted: a sum that only grows (``HighWaterMark``).
    private static func storedBytes(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(
            db,
            sql: """
                SELECT (SELECT COALESCE(SUM(stored_bytes + compacted_bytes), 0) FROM datasets)
                     + (SELECT COALESCE(SUM(stored_bytes), 0) FROM deleted_datasets)
                """)
            ?? 0
    }

    /// The most pushes one transaction holds (each is still all or nothing on its own).
    static let maxPushesPerTransaction = 32
    /// The most changes a group of pushes holds (one push of more runs alone): pushes of
    /// 5 000 changes would otherwise make transactions of 160 000.
    static let maxChangesPerTransaction = 20_000

    /// Where the database file is: its device, inode and birth time. A file copied back from
    /// a backup is a new file: the filesystem may give it the inode the old one had, but not
    /// its birth time (to the microsecond, where the filesystem records one).
    static func identity(of path: String) -> String {
        var info = stat()
        guard stat(path, &info) == 0 else { return "sqlite:\(path)" }
        return "sqlite:\(info.st_dev):\(info.st_ino):\(tandem_file_birth_nanoseconds(path))"
    }

    private static func storedEpoch(_ db: Database) throws -> StorageEpoch? {
        guard let bytes = try Data.fetchOne(db, sql: "SELECT key FROM server_keys WHERE name = 'epoch'"),
            let identity = try Data.fetchOne(db, sql: "SELECT key FROM server_keys WHERE name = 'identity'")
        else { return nil }
        return StorageEpoch(bytes: [UInt8](bytes), identity: String(decoding: identity, as: UTF8.self))
    }

    private static func store(_ epoch: StorageEpoch, _ db: Database) throws {
        try db.execute(
            sql: "INSERT OR REPLACE INTO server_keys(name, key) VALUES ('epoch', ?), ('identity', ?)",
            arguments: [Data(epoch.bytes), Data(epoch.identity.utf8)])
    }

    /// Starts a new epoch (``Cursor``): every client's next pull is refused with
    /// `cursor_epoch` and it resyncs from the start. For data restored in a way its identity
    /// does not show.
    public func startNewEpoch() async throws -> UInt64 {
        let value = try await pool.write { db in
            var epoch = try Self.storedEpoch(db) ?? self.settledEpoch.withLockedValue { $0 }
            epoch.value = Cursor.newEpoch()
            try Self.store(epoch, db)
            self.settledEpoch.withLockedValue { $0 = epoch }
            return epoch.value
        }
        await refreshMark()
        return value
    }

    /// Records that the data was copied to `target` (text for people) and starts a new epoch
    /// here: a client that syncs with this copy again after syncing with the other resyncs
    /// instead of skipping changes.
    public func markCopied(to target: String) async throws {
        try await pool.write { db in
            var epoch = self.settledEpoch.withLockedValue { $0 }
            try db.execute(
                sql: "INSERT OR IGNORE INTO server_keys(name, key) VALUES ('copied_epoch', ?)", arguments: [Data(epoch.bytes)])
            epoch.value = Cursor.newEpoch()
            try Self.store(epoch, db)
            try db.execute(sql: "INSERT OR REPLACE INTO server_keys(name, key) VALUES ('copied_to', ?)", arguments: [Data(target.utf8)])
            self.settledEpoch.withLockedValue { $0 = epoch }
        }
        await refreshMark()
    }

    /// What a copy of this data records it came from, and the epoch the copy keeps: where the
    /// data is, the epoch it had when first copied, and how many log entries, users, tokens,
    /// datasets and schema versions it holds. The same marker after a copy means nothing
    /// changed since.
    public func copyOrigin() async throws -> (marker: String, epoch: UInt64) {
        let settled = self.settled
        return try await pool.read { db in
            let epoch =
                try Data.fetchOne(db, sql: "SELECT key FROM server_keys WHERE name = 'copied_epoch'")
                .flatMap { StorageEpoch(bytes: [UInt8]($0), identity: settled.identity) } ?? settled
            let counts = try ["log", "users", "tokens", "datasets", "dataset_members", "schema_versions"].map { table in
                "\(table):\(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table)") ?? 0)"
            }
            return ("\(settled.identity)#\(String(epoch.value, radix: 16))#\(counts.joined(separator: ","))", epoch.value)
        }
    }

    private static func migrate(_ db: Database) throws {
        let version = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
        if version == formatVersion { return }
        guard version == 0 else {
            throw StorageError.unavailable(
                "the server database has format \(version); this tandem-server reads format \(formatVersion) only (no upgrades before the first release). Stop the server, move its data directory aside and start with a new one; clients then sync into new stores"
            )
        }
        guard try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sqlite_master")! == 0 else {
            throw StorageError.unavailable("the file is not a tandem-server database (it has tables, and no format); point --data-dir at an empty directory or a tandem-server one")
        }
        try db.execute(
            sql: """
                CREATE TABLE users(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE, created_at INTEGER NOT NULL,
                                   max_datasets INTEGER, max_schema_versions INTEGER, max_bytes INTEGER, jwt_subject TEXT,
                                   is_operator INTEGER NOT NULL DEFAULT 0);
                CREATE UNIQUE INDEX users_jwt_subject ON users(jwt_subject);
                CREATE TABLE tokens(id TEXT PRIMARY KEY, user_id INTEGER NOT NULL REFERENCES users(id), secret_hash TEXT NOT NULL,
                                    created_at INTEGER NOT NULL, revoked_at INTEGER, datasets TEXT, read_only INTEGER NOT NULL DEFAULT 0,
                                    expires_at INTEGER);
                CREATE UNIQUE INDEX users_name_nocase ON users(name COLLATE NOCASE);
                CREATE INDEX tokens_user ON tokens(user_id);
                CREATE TABLE datasets(id INTEGER PRIMARY KEY AUTOINCREMENT, owner_id INTEGER NOT NULL REFERENCES users(id), name TEXT NOT NULL,
                                      created_at INTEGER NOT NULL, stored_bytes INTEGER NOT NULL DEFAULT 0,
                                      compacted_through INTEGER NOT NULL DEFAULT 0, tombstones_before INTEGER NOT NULL DEFAULT 0,
                                      compacted_bytes INTEGER NOT NULL DEFAULT 0, UNIQUE(owner_id, name));
                CREATE TABLE log_marks(dataset_id INTEGER NOT NULL, position INTEGER NOT NULL, at INTEGER NOT NULL,
                                       PRIMARY KEY(dataset_id, position)) WITHOUT ROWID;
                CREATE TABLE dataset_members(dataset_id INTEGER NOT NULL REFERENCES datasets(id), user_id INTEGER NOT NULL REFERENCES users(id),
                                             role TEXT NOT NULL, added_at INTEGER NOT NULL, PRIMARY KEY(dataset_id, user_id)) WITHOUT ROWID;
                CREATE INDEX dataset_members_user ON dataset_members(user_id);
                CREATE TABLE deleted_datasets(id INTEGER PRIMARY KEY, owner_id INTEGER NOT NULL, name TEXT NOT NULL, deleted_at INTEGER NOT NULL,
                                              stored_bytes INTEGER NOT NULL, purged INTEGER NOT NULL DEFAULT 0);
                CREATE INDEX deleted_datasets_name ON deleted_datasets(owner_id, name);
                CREATE TABLE schema_versions(dataset_id INTEGER NOT NULL REFERENCES datasets(id), version INTEGER NOT NULL,
                                             schema TEXT NOT NULL, registered_at INTEGER NOT NULL, PRIMARY KEY(dataset_id, version));
                CREATE TABLE records(dataset_id INTEGER NOT NULL, uri TEXT NOT NULL, state BLOB NOT NULL, PRIMARY KEY(dataset_id, uri)) WITHOUT ROWID;
                CREATE TABLE log(dataset_id INTEGER NOT NULL, position INTEGER NOT NULL, schema_version INTEGER NOT NULL,
                                 change BLOB NOT NULL, PRIMARY KEY(dataset_id, position)) WITHOUT ROWID;
                CREATE TABLE lost_values(id INTEGER PRIMARY KEY, dataset_id INTEGER NOT NULL, uri TEXT NOT NULL, position INTEGER,
                                         lost BLOB NOT NULL, at INTEGER NOT NULL);
                CREATE INDEX lost_values_dataset ON lost_values(dataset_id);
                CREATE TABLE idempotency(dataset_id INTEGER NOT NULL, key TEXT NOT NULL, request_hash TEXT NOT NULL,
                                         response BLOB NOT NULL, created_at INTEGER NOT NULL, PRIMARY KEY(dataset_id, key)) WITHOUT ROWID;
                CREATE TABLE unique_values(dataset_id INTEGER NOT NULL, entity TEXT NOT NULL, key TEXT NOT NULL, uri TEXT NOT NULL,
                                           PRIMARY KEY(dataset_id, entity, key)) WITHOUT ROWID;
                CREATE TABLE merged_records(dataset_id INTEGER NOT NULL, uri TEXT NOT NULL, survivor TEXT NOT NULL, stamp TEXT NOT NULL, state BLOB,
                                            remade TEXT, PRIMARY KEY(dataset_id, uri)) WITHOUT ROWID;
                CREATE TABLE link_members(dataset_id INTEGER NOT NULL, member TEXT NOT NULL, owner TEXT NOT NULL, field TEXT NOT NULL,
                                          PRIMARY KEY(dataset_id, member, owner, field)) WITHOUT ROWID;
                CREATE TABLE server_keys(name TEXT NOT NULL PRIMARY KEY, key BLOB NOT NULL);
                PRAGMA user_version = \(formatVersion);
                """)
        try db.execute(sql: "INSERT INTO server_keys(name, key) VALUES ('cursor', ?)", arguments: [Data(Cursor.newKey())])
    }

    public func addUser(name: String, now: Int64, subject: String?) async throws -> ServerUser {
        try await pool.write { db in
            // Unique whatever their case: "Ann" is never a second "ann".
            if let existing = try String.fetchOne(db, sql: "SELECT name FROM users WHERE name = ? COLLATE NOCASE", arguments: [name]) {
                throw StorageError.conflict(existing == name ? "user '\(name)' exists" : "user '\(existing)' exists (user names are unique whatever their case)")
            }
            if let subject, try Int64.fetchOne(db, sql: "SELECT id FROM users WHERE jwt_subject = ?", arguments: [subject]) != nil {
                throw StorageError.conflict("the sign-in subject '\(subject)' is bound to another user")
            }
            try db.execute(sql: "INSERT INTO users(name, created_at, jwt_subject) VALUES (?, ?, ?)", arguments: [name, now, subject])
            return ServerUser(id: db.lastInsertedRowID, name: name)
        }
    }

    /// The columns of a user, as ``user(_:)`` reads them.
    private static let userColumns = "u.id, u.name, u.max_datasets, u.max_schema_versions, u.max_bytes, u.is_operator"

    private static func user(_ row: Row) -> ServerUser {
        ServerUser(id: row[0], name: row[1], quota: UserQuota(datasets: row[2], schemaVersions: row[3], bytes: row[4]), isOperator: row[5])
    }

    public func users(now: Int64) async throws -> [UserSummary] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT \(Self.userColumns), u.created_at,
                           (SELECT COUNT(*) FROM datasets d WHERE d.owner_id = u.id),
                           (SELECT COUNT(*) FROM dataset_members m WHERE m.user_id = u.id),
                           (SELECT COUNT(*) FROM tokens t WHERE t.user_id = u.id AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > ?))
                    FROM users u ORDER BY u.name
                    """, arguments: [now]
            ).map { UserSummary(user: Self.user($0), createdAt: $0[6], datasets: $0[7], memberships: $0[8], tokens: $0[9]) }
        }
    }

    public func removeUser(id: Int64) async throws {
        try await pool.write { db in
            guard let name = try String.fetchOne(db, sql: "SELECT name FROM users WHERE id = ?", arguments: [id]) else {
                throw StorageError.notFound("no user with id \(id)")
            }
            let owned = try String.fetchAll(db, sql: "SELECT name FROM datasets WHERE owner_id = ? ORDER BY name", arguments: [id])
            guard owned.isEmpty else {
                throw StorageError.conflict("user '\(name)' owns datasets (\(owned.joined(separator: ", "))); delete them first")
            }
            try db.execute(sql: "DELETE FROM tokens WHERE user_id = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM dataset_members WHERE user_id = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM users WHERE id = ?", arguments: [id])
        }
    }

    public func user(subject: String) async throws -> ServerUser? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT \(Self.userColumns) FROM users u WHERE u.jwt_subject = ?", arguments: [subject]).map(Self.user)
        }
    }

    public func user(named name: String) async throws -> ServerUser? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT \(Self.userColumns) FROM users u WHERE u.name = ?", arguments: [name]).map(Self.user)
        }
    }

    public func setOperator(user: Int64, _ isOperator: Bool) async throws {
        try await pool.write { db in
            try db.execute(sql: "UPDATE users SET is_operator = ? WHERE id = ?", arguments: [isOperator, user])
            guard db.changesCount == 1 else { throw StorageError.notFound("no user with id \(user)") }
        }
    }

    public func setQuota(user: Int64, _ quota: UserQuota) async throws {
        try await pool.write { db in
            try db.execute(
                sql: "UPDATE users SET max_datasets = ?, max_schema_versions = ?, max_bytes = ? WHERE id = ?",
                arguments: [quota.datasets, quota.schemaVersions, quota.bytes, user])
            guard db.changesCount == 1 else { throw StorageError.notFound("no user with id \(user)") }
        }
    }

    public func storedBytes(owner: Int64) async throws -> Int64 {
        try await pool.read { db in
            try Int64.fetchOne(db, sql: "SELECT COALESCE(SUM(stored_bytes), 0) FROM datasets WHERE owner_id = ?", arguments: [owner]) ?? 0
        }
    }

    public func addToken(id: String, secretHash: String, user: Int64, scope: TokenScope, now: Int64) async throws {
        try await pool.write { db in
            try db.execute(
                sql: "INSERT INTO tokens(id, user_id, secret_hash, created_at, datasets, read_only, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                arguments: [id, user, secretHash, now, scope.datasetsText, scope.readOnly, scope.expiresAt])
        }
    }

    public func revokeToken(id: String) async throws -> Bool {
        try await pool.write { db in
            try db.execute(
                sql: "UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                arguments: [Int64(Date().timeIntervalSince1970 * 1000), id])
            return db.changesCount > 0
        }
    }

    public func token(id: String) async throws -> StoredToken? {
        try await pool.read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT \(Self.userColumns), t.secret_hash, t.datasets, t.read_only, t.expires_at FROM tokens t JOIN users u ON u.id = t.user_id
                    WHERE t.id = ? AND t.revoked_at IS NULL
                    """, arguments: [id]
            ).map {
                StoredToken(
                    user: Self.user($0), secretHash: $0[6],
                    scope: TokenScope(datasets: TokenScope.datasets(fromText: $0[7]), readOnly: $0[8], expiresAt: $0[9]))
            }
        }
    }

    public func tokens(user: Int64?) async throws -> [TokenInfo] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT t.id, u.name, t.created_at, t.revoked_at, t.datasets, t.read_only, t.expires_at FROM tokens t JOIN users u ON u.id = t.user_id
                    WHERE ?1 IS NULL OR t.user_id = ?1 ORDER BY u.name, t.created_at, t.id
                    """, arguments: [user]
            ).map { row in
                let scope = TokenScope(datasets: TokenScope.datasets(fromText: row[4]), readOnly: row[5], expiresAt: row[6])
                let names = try (scope.datasets ?? []).compactMap { dataset in
                    try String.fetchOne(
                        db, sql: "SELECT o.name || '/' || d.name FROM datasets d JOIN users o ON o.id = d.owner_id WHERE d.id = ?", arguments: [dataset])
                }
                return TokenInfo(id: row[0], user: row[1], createdAt: row[2], revokedAt: row[3], scope: scope, datasets: names)
            }
        }
    }

    public func createDataset(owner: Int64, name: String, now: Int64, limit: Int) async throws -> (DatasetInfo, created: Bool) {
        try await pool.write { db in
            if let existing = try Self.info(db, owner: owner, name: name) { return (existing, false) }
            let count = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM datasets WHERE owner_id = ?", arguments: [owner]) ?? 0
            guard count < limit else { throw StorageError.datasetQuota(limit) }
            try db.execute(sql: "INSERT INTO datasets(owner_id, name, created_at) VALUES (?, ?, ?)", arguments: [owner, name, now])
            return (DatasetInfo(name: name, createdAt: now, schemaVersion: 0), true)
        }
    }

    private static let infoSQL = """
        SELECT d.name, d.created_at, COALESCE((SELECT MAX(version) FROM schema_versions s WHERE s.dataset_id = d.id), 0)
        FROM datasets d
        """

    private static func info(_ db: Database, owner: Int64, name: String) throws -> DatasetInfo? {
        try Row.fetchOne(db, sql: infoSQL + " WHERE d.owner_id = ? AND d.name = ?", arguments: [owner, name])
            .map { DatasetInfo(name: $0[0], createdAt: $0[1], schemaVersion: $0[2]) }
    }

    public func datasets(owner: Int64) async throws -> [DatasetInfo] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: Self.infoSQL + " WHERE d.owner_id = ? ORDER BY d.name", arguments: [owner])
                .map { DatasetInfo(name: $0[0], createdAt: $0[1], schemaVersion: $0[2]) }
        }
    }

    public func datasetOverviews() async throws -> [DatasetOverview] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT d.id, o.name, d.name, d.created_at, d.stored_bytes,
                           (SELECT COUNT(*) FROM records r WHERE r.dataset_id = d.id),
                           COALESCE((SELECT MAX(position) FROM log l WHERE l.dataset_id = d.id), d.compacted_through), d.compacted_through,
                           (SELECT COUNT(*) FROM schema_versions s WHERE s.dataset_id = d.id),
                           (SELECT COUNT(*) FROM dataset_members m WHERE m.dataset_id = d.id)
                    FROM datasets d JOIN users o ON o.id = d.owner_id ORDER BY o.name, d.name
                    """
            ).map {
                DatasetOverview(
                    id: $0[0], owner: $0[1], name: $0[2], createdAt: $0[3], storedBytes: $0[4], records: $0[5], logHead: $0[6],
                    compactedThrough: $0[7], schemaVersions: $0[8], members: $0[9])
            }
        }
    }

    public func datasetID(owner: Int64, name: String) async throws -> Int64? {
        try await pool.read { db in
            try Int64.fetchOne(db, sql: "SELECT id FROM datasets WHERE owner_id = ? AND name = ?", arguments: [owner, name])
        }
    }

    public func datasets(reachableBy user: Int64) async throws -> [ReachableDataset] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT d.id, d.name, d.created_at, COALESCE((SELECT MAX(version) FROM schema_versions s WHERE s.dataset_id = d.id), 0),
                           o.name, r.role
                    FROM (SELECT id AS dataset_id, 'admin' AS role FROM datasets WHERE owner_id = ?1
                          UNION ALL SELECT dataset_id, role FROM dataset_members WHERE user_id = ?1) r
                    JOIN datasets d ON d.id = r.dataset_id JOIN users o ON o.id = d.owner_id
                    ORDER BY o.name, d.name
                    """, arguments: [user]
            ).map { row in
                ReachableDataset(
                    id: row[0],
                    info: DatasetInfo(name: row[1], createdAt: row[2], schemaVersion: row[3], owner: row[4], role: DatasetRole(rawValue: row[5])))
            }
        }
    }

    public func deleteDataset(id: Int64) async throws -> Bool {
        defer { markSoon() }
        return try await pool.write { db in
            guard try Int64.fetchOne(db, sql: "SELECT id FROM datasets WHERE id = ?", arguments: [id]) != nil else { return false }
            try db.execute(
                sql: """
                    INSERT INTO deleted_datasets(id, owner_id, name, deleted_at, stored_bytes)
                    SELECT id, owner_id, name, ?, stored_bytes + compacted_bytes FROM datasets WHERE id = ?
                    """, arguments: [Int64(Date().timeIntervalSince1970 * 1000), id])
            try db.execute(sql: "DELETE FROM dataset_members WHERE dataset_id = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM schema_versions WHERE dataset_id = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM datasets WHERE id = ?", arguments: [id])
            return true
        }
    }

    public func deletedDatasetIDs(owner: Int64, name: String) async throws -> [Int64] {
        try await pool.read { db in
            try Int64.fetchAll(db, sql: "SELECT id FROM deleted_datasets WHERE owner_id = ? AND name = ?", arguments: [owner, name])
        }
    }

    /// The tables a deleted dataset leaves to ``purgeDeletedDatasets(limit:)``, with the
    /// columns that find a row.
    static let purgedTables: [(table: String, key: String)] = [
        ("log", "position"), ("records", "uri"), ("lost_values", "id"), ("idempotency", "key"), ("unique_values", "entity, key"),
        ("merged_records", "uri"), ("link_members", "member, owner, field"), ("log_marks", "position"),
    ]

    public func purgeDeletedDatasets(limit: Int) async throws -> Int {
        try await pool.write { db in
            guard let id = try Int64.fetchOne(db, sql: "SELECT id FROM deleted_datasets WHERE purged = 0 ORDER BY id LIMIT 1") else { return 0 }
            var deleted = 0
            for (table, key) in Self.purgedTables where deleted < limit {
                try db.execute(
                    sql: "DELETE FROM \(table) WHERE dataset_id = ?1 AND (\(key)) IN (SELECT \(key) FROM \(table) WHERE dataset_id = ?1 LIMIT ?2)",
                    arguments: [id, limit - deleted])
                deleted += db.changesCount
            }
            if deleted == 0 {
                try db.execute(sql: "UPDATE deleted_datasets SET purged = 1 WHERE id = ?", arguments: [id])
                return 1
            }
            return deleted
        }
    }

    public func setMember(dataset: Int64, user: Int64, role: DatasetRole, now: Int64) async throws {
        try await pool.write { db in
            try db.execute(
                sql: "INSERT INTO dataset_members(dataset_id, user_id, role, added_at) VALUES (?, ?, ?, ?) ON CONFLICT DO UPDATE SET role = excluded.role",
                arguments: [dataset, user, role.rawValue, now])
        }
    }

    public func removeMember(dataset: Int64, user: Int64) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM dataset_members WHERE dataset_id = ? AND user_id = ?", arguments: [dataset, user])
            return db.changesCount > 0
        }
    }

    public func members(dataset: Int64) async throws -> [DatasetMember] {
        try await pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT u.name, m.role FROM dataset_members m JOIN users u ON u.id = m.user_id WHERE m.dataset_id = ? ORDER BY u.name",
                arguments: [dataset]
            ).compactMap { row in DatasetRole(rawValue: row[1]).map { DatasetMember(user: row[0], role: $0) } }
        }
    }

    public func role(dataset: Int64, user: Int64) async throws -> DatasetRole? {
        try await pool.read { db in
            try String.fetchOne(db, sql: "SELECT role FROM dataset_members WHERE dataset_id = ? AND user_id = ?", arguments: [dataset, user])
                .flatMap(DatasetRole.init(rawValue:))
        }
    }

    private static func history(_ db: Database, dataset: Int64) throws -> [SchemaVersionInfo] {
        try Row.fetchAll(
            db, sql: "SELECT version, registered_at, schema FROM schema_versions WHERE dataset_id = ? ORDER BY version",
            arguments: [dataset]
        ).map { SchemaVersionInfo(version: $0[0], registeredAt: $0[1], schema: $0[2]) }
    }

    public func schemaHistory(dataset: Int64) async throws -> [SchemaVersionInfo] {
        try await pool.read { db in try Self.history(db, dataset: dataset) }
    }

    public func registerSchema(dataset: Int64, json: String, now: Int64, after versions: Int) async throws -> SchemaRegistration? {
        defer { markSoon() }
        return try await pool.write { db in
            let count = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM schema_versions WHERE dataset_id = ?", arguments: [dataset]) ?? 0
            guard count == versions else { return nil }
            let version = versions + 1
            try db.execute(
                sql: "INSERT INTO schema_versions(dataset_id, version, schema, registered_at) VALUES (?, ?, ?, ?)",
                arguments: [dataset, version, json, now])
            try db.execute(sql: "UPDATE datasets SET stored_bytes = stored_bytes + ? WHERE id = ?", arguments: [json.utf8.count, dataset])
            return SchemaRegistration(version: version, created: true)
        }
    }

    public func push(dataset: Int64, key: String, requestHash: String, now: Int64, changes: Int, job: PushJob) async throws -> StoredPush {
        defer { markSoon() }
        return try await committer.submit(QueuedPush(dataset: dataset, key: key, requestHash: requestHash, now: now, changes: changes, job: job))
    }

    /// One push inside the group's transaction (in its own savepoint).
    private static func run(_ push: QueuedPush, _ db: Database) throws -> StoredPush {
        if let row = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT request_hash, response FROM idempotency WHERE dataset_id = ? AND key = ?"),
            arguments: [push.dataset, push.key])
        {
            return StoredPush(response: row[1], requestHash: row[0], replayed: true)
        }
        // Deleted since the request was authorized (it waited for its body or its turn):
        // nothing is written under a dead id.
        guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT owner_id, tombstones_before FROM datasets WHERE id = ?"), arguments: [push.dataset])
        else {
            throw StorageError.notFound("the dataset was deleted")
        }
        let owner: Int64 = row[0]
        if let limit = push.job.byteLimit {
            let stored =
                try Int64.fetchOne(
                    db.cachedStatement(sql: "SELECT COALESCE(SUM(stored_bytes), 0) FROM datasets WHERE owner_id = ?"), arguments: [owner]) ?? 0
            guard stored < limit else { throw StorageError.byteQuota(stored: stored, limit: limit) }
        }
        var store = SQLitePushStore(db: db, dataset: push.dataset, tombstones: row[1])
        let response = try PushWorkspace.perform(push.job, on: &store)
        if store.loggedBytes > 0 {
            try db.cachedStatement(sql: "UPDATE datasets SET stored_bytes = stored_bytes + ? WHERE id = ?")
                .execute(arguments: [store.loggedBytes, push.dataset])
        }
        try db.cachedStatement(sql: "INSERT INTO idempotency(dataset_id, key, request_hash, response, created_at) VALUES (?, ?, ?, ?, ?)")
            .execute(arguments: [push.dataset, push.key, push.requestHash, response, push.now])
        return StoredPush(response: response, requestHash: push.requestHash, replayed: false)
    }

    public func pull(dataset: Int64, after position: Int64, limit: Int) async throws -> (entries: [LogEntry], hasMore: Bool) {
        try await pool.read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT position, schema_version, change FROM log WHERE dataset_id = ? AND position > ? ORDER BY position LIMIT ?
                    """, arguments: [dataset, position, limit + 1])
            let entries = try rows.prefix(limit).map { row in
                LogEntry(position: row[0], change: try WireJSONReader.change(row[2] as Data), schemaVersion: row[1])
            }
            return (entries, rows.count > limit)
        }
    }

    public func logHead(dataset: Int64) async throws -> Int64 {
        try await pool.read { db in try Int64.fetchOne(db, sql: "SELECT MAX(position) FROM log WHERE dataset_id = ?", arguments: [dataset]) ?? 0 }
    }

    public func pullJSON(dataset: Int64, after position: Int64, limit: Int, maxBytes: Int) async throws -> PulledPage {
        try await pool.read { db in
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT position, schema_version, change FROM log WHERE dataset_id = ? AND position > ? ORDER BY position LIMIT ?
                    """, arguments: [dataset, position, limit + 1])
            var page = PageWriter(limit: limit, maxBytes: maxBytes)
            var hasMore = false
            while let row = try rows.next() {
                guard page.hasRoom else {
                    hasMore = true
                    break
                }
                let at: Int64 = row[0]
                // Log changes are stored as the JSON of a WireChange: spliced as they are.
                try row.withUnsafeData(atIndex: 2) { data in
                    page.add(position: at) { $0.logEntry(position: at, schemaVersion: row[1]) { $0.rawJSON(data ?? Data("null".utf8)) } }
                }
            }
            return page.finish(hasMore: hasMore)
        }
    }

    public func records(dataset: Int64, after uri: String, limit: Int, maxBytes: Int) async throws -> (records: [StoredRecord], hasMore: Bool) {
        try await pool.read { db in
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT r.uri, r.state, m.survivor, m.stamp FROM records r
                    LEFT JOIN merged_records m ON m.dataset_id = r.dataset_id AND m.uri = r.uri
                    WHERE r.dataset_id = ? AND r.uri > ? ORDER BY r.uri LIMIT ?
                    """, arguments: [dataset, uri, limit + 1])
            var records: [StoredRecord] = []
            records.reserveCapacity(min(limit, 10_000))
            var bytes = 0
            while let row = try rows.next() {
                guard records.count < limit, records.isEmpty || bytes < maxBytes else { return (records, true) }
                let state = try row.withUnsafeData(atIndex: 1) { data in
                    bytes += data?.count ?? 0
                    return try RecordState(stored: data ?? Data())
                }
                let survivor: String? = row[2]
                let stamp = (row[3] as String?).flatMap { HLCTimestamp($0) }
                records.append(StoredRecord(uri: row[0], state: state, merged: survivor.flatMap { s in stamp.map { (s, $0) } }))
            }
            return (records, false)
        }
    }

    private static let compactionColumns =
        "id, (SELECT MAX(position) FROM log WHERE dataset_id = datasets.id), compacted_through, tombstones_before FROM datasets"

    private static func compactionState(_ row: Row) -> CompactionState {
        CompactionState(dataset: row[0], head: row[1] ?? 0, compactedThrough: row[2], tombstonesBefore: row[3])
    }

    public func compaction(dataset: Int64) async throws -> CompactionState {
        try await pool.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT \(Self.compactionColumns) WHERE id = ?", arguments: [dataset]) else {
                throw StorageError.notFound("no dataset with id \(dataset)")
            }
            return Self.compactionState(row)
        }
    }

    public func compactionStates() async throws -> [CompactionState] {
        try await pool.read { db in try Row.fetchAll(db, sql: "SELECT \(Self.compactionColumns) ORDER BY id").map(Self.compactionState) }
    }

    public func addLogMark(dataset: Int64, position: Int64, at: Int64) async throws {
        try await pool.write { db in
            try db.execute(
                sql: "INSERT INTO log_marks(dataset_id, position, at) SELECT id, ?, ? FROM datasets WHERE id = ? ON CONFLICT DO NOTHING",
                arguments: [position, at, dataset])
        }
    }

    public func logMark(dataset: Int64, notAfter at: Int64?, notPast position: Int64?) async throws -> LogMark? {
        try await pool.read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT position, at FROM log_marks WHERE dataset_id = ? AND at <= ? AND position <= ? ORDER BY position DESC LIMIT 1
                    """, arguments: [dataset, at ?? .max, position ?? .max]
            ).map { LogMark(position: $0[0], at: $0[1]) }
        }
    }

    public func compactLog(dataset: Int64, through: Int64, limit: Int) async throws -> Int {
        defer { markSoon() }
        return try await pool.write { db in
            guard let from = try Int64.fetchOne(db, sql: "SELECT compacted_through FROM datasets WHERE id = ?", arguments: [dataset]) else { return 0 }
            // Never the head: its position is the dataset's log head.
            let head = try Int64.fetchOne(db, sql: "SELECT MAX(position) FROM log WHERE dataset_id = ?", arguments: [dataset]) ?? 0
            let end = min(through, head - 1, from + Int64(limit))
            guard end > from else { return 0 }
            let bytes =
                try Int64.fetchOne(
                    db, sql: "SELECT COALESCE(SUM(length(change)), 0) FROM log WHERE dataset_id = ? AND position > ? AND position <= ?",
                    arguments: [dataset, from, end]) ?? 0
            try db.execute(sql: "DELETE FROM log WHERE dataset_id = ? AND position > ? AND position <= ?", arguments: [dataset, from, end])
            let deleted = db.changesCount
            try db.execute(
                sql: """
                    UPDATE datasets SET compacted_through = ?1, stored_bytes = MAX(stored_bytes - ?2, 0),
                                        compacted_bytes = compacted_bytes + MIN(?2, stored_bytes) WHERE id = ?3
                    """, arguments: [end, bytes, dataset])
            // The newest mark at or before the new point stays: it dates the compacted log.
            try db.execute(
                sql: """
                    DELETE FROM log_marks WHERE dataset_id = ?1 AND position < (SELECT MAX(position) FROM log_marks WHERE dataset_id = ?1 AND position <= ?2)
                    """, arguments: [dataset, end])
            return max(deleted, 1)
        }
    }

    public func pruneTombstones(dataset: Int64, before: Int64, after uri: String, limit: Int) async throws -> (last: String?, pruned: Int) {
        try await pool.write { db in
            try db.execute(sql: "UPDATE datasets SET tombstones_before = MAX(tombstones_before, ?) WHERE id = ?", arguments: [before, dataset])
            let rows = try Row.fetchAll(
                db, sql: "SELECT uri, state FROM records WHERE dataset_id = ? AND uri > ? ORDER BY uri LIMIT ?", arguments: [dataset, uri, limit])
            var pruned = 0
            let delete = try db.cachedStatement(sql: "DELETE FROM records WHERE dataset_id = ? AND uri = ?")
            for row in rows {
                let state = try RecordState(stored: row[1] as Data)
                guard state.isTombstone(before: before) else { continue }
                try delete.execute(arguments: [dataset, row[0] as String])
                pruned += 1
            }
            return (rows.last?[0], pruned)
        }
    }

    public func pruneIdempotencyKeys(before cutoff: Int64) async throws -> Int {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM idempotency WHERE created_at < ?", arguments: [cutoff])
            return db.changesCount
        }
    }

    public func checkHealth() async throws {
        try await pool.read { db in _ = try Int.fetchOne(db, sql: "SELECT 1 FROM users LIMIT 1") }
    }
}

public import Foundation
public import Logging
import NIOConcurrencyHelpers
import NIOCore
public import PostgresNIO
public import TandemServer
import TandemConflicts
import TandemSchema
public import TandemWire

/// ``ServerStorage`` on PostgreSQL (postgres-nio's connection pool): any number of
/// `tandem-server` nodes share one database and answer every client as one server would.
/// Every method is one transaction; the layout is made and migrated by the server itself
/// (`tandem_migrations`, under an advisory lock, by the first node of a new version).
///
/// **The log's order across nodes.** A push first locks its dataset's row
/// (`SELECT … FOR UPDATE`), reads the dataset's `log_head` there, writes its entries after
/// it and moves `log_head` in the same transaction. Pushes to one dataset therefore commit
/// one after another, whatever node runs them, and each takes the positions after the last
/// committed one: the log has no gaps (a rolled-back push moved nothing) and its positions
/// commit in order. PostgreSQL makes a transaction visible before it releases its locks, so a
/// reader that sees position *n* sees every position before it: a pull never passes a
/// position whose push has not committed. The idempotency key is looked up after the lock,
/// in a statement of its own (READ COMMITTED takes a new snapshot per statement), so a retry
/// on another node waits for the first push and replays its answer. Pushes to different
/// datasets run in parallel, one pool connection each; pushes to one dataset queue on each
/// node without holding a connection (``DatasetGate``).
///
/// ```swift
/// let storage = try await PostgresServerStorage(url: PostgresURL("postgres://tandem@localhost/tandem"), logger: logger)
/// defer { storage.close() }
/// ```
public final class PostgresServerStorage: ServerStorage {
    public let cursorKey: [UInt8]
    public var epoch: UInt64 { settledEpoch.withLockedValue { $0.value } }
    let settledEpoch: NIOLockedValueBox<StorageEpoch>
    /// Why opening the storage started a new epoch (``StorageEpoch``), `nil` when it kept
    /// the stored one: the server logs it.
    public let newEpochReason: String?
    let pool: PostgresPool
    let logger: Logger
    public let logSignals = LogSignals()
    /// This node's name in push announcements (its own are not heard again).
    private let node = String(UInt64.random(in: 0...UInt64.max), radix: 36)
    /// The channel of push announcements (``PostgresLogListener``).
    private let channel: String
    /// Hears other nodes' pushes (``PostgresLogListener``); `nil` for admin commands.
    private let listener: NIOLockedValueBox<PostgresLogListener?> = NIOLockedValueBox(nil)
    /// Whether pushes announce themselves to other nodes (tests turn it off to lose them).
    let announcesPushes = NIOLockedValueBox(true)
    private let gate = DatasetGate<QueuedPush, StoredPush>(
        maxBatch: PostgresServerStorage.maxPushesPerTransaction, maxWeight: PostgresServerStorage.maxChangesPerTransaction, weight: \.changes)
    /// How long a push may wait for a connection, or for its turn at its dataset.
    private let leaseDeadline: Duration
    /// The URL without its password.
    public var location: String { pool.location }

    /// Connects to the database `url` names (the pool runs until ``close()``), makes or
    /// migrates its layout, and reads the cursor key. An operation waits at most
    /// `leaseDeadline` for a connection and takes at most `operationDeadline` in all (see
    /// ``PostgresPool``).
    ///
    /// - Throws: ``StorageError/unavailable(_:)`` when PostgreSQL cannot be reached or the
    ///   database is not one this server can use.
    /// `applicationName`: what its connections call themselves (`pg_stat_activity`); nodes
    /// that serve use ``nodeApplicationName``.
    ///
    /// `listens`: whether the node hears other nodes' pushes for its waiting pulls
    /// (``PostgresLogListener``, on a connection of its own), reading the log heads every
    /// `recheckInterval` in case a notification was lost.
    public init(
        url: PostgresURL, maxConnections: Int = 20, leaseDeadline: Duration = .seconds(5), operationDeadline: Duration = .seconds(20),
        applicationName: String = PostgresServerStorage.nodeApplicationName, listens: Bool = true, recheckInterval: Duration = .seconds(5),
        logger: Logger
    ) async throws {
        var configuration = url.configuration
        configuration.options.additionalStartupParameters.append(("application_name", applicationName))
        configuration.options.maximumConnections = maxConnections
        configuration.options.connectTimeout = .seconds(5)
        let settledEpoch = NIOLockedValueBox(StorageEpoch(value: 0, identity: ""))
        self.settledEpoch = settledEpoch
        pool = PostgresPool(
            configuration: configuration, location: url.description, logger: logger, leaseDeadline: leaseDeadline,
            operationDeadline: operationDeadline, reconnected: { client in try await Self.settleEpoch(on: client, into: settledEpoch, logger: logger) })
        self.leaseDeadline = leaseDeadline
        self.logger = logger
        do {
            (cursorKey, newEpochReason, channel) = try await pool.withTransaction { connection in
                try await Self.migrate(connection, logger: logger)
                let key = try await connection.query("SELECT key FROM server_keys WHERE name = 'cursor'", logger: logger).collect()
                    .first?.decode(ByteBuffer.self)
                guard let key, key.readableBytes == 32 else {
                    throw StorageError.unavailable("the PostgreSQL database has no cursor key; it is damaged")
                }
                let (epoch, reason) = try await Self.settleEpoch(connection, logger: logger)
                settledEpoch.withLockedValue { $0 = epoch }
                let place = try await connection.query("SELECT current_database(), current_schema()", logger: logger).collect().first?
                    .decode((String, String).self)
                return ([UInt8](key.readableBytesView), reason, PostgresLogListener.channel(database: place?.0 ?? "", schema: place?.1 ?? ""))
            }
        } catch {
            pool.close()
            throw error
        }
        if listens {
            // Named like the node's pool connections, so pg_stat_activity shows whose it is.
            var listening = url.connectionConfiguration
            listening.options.additionalStartupParameters.append(("application_name", applicationName))
            listener.withLockedValue {
                $0 = PostgresLogListener(
                    configuration: listening, channel: channel, node: node, signals: logSignals, recheckInterval: recheckInterval,
                    heads: { [weak self] datasets in try await self?.logHeads(datasets) ?? [:] }, logger: logger)
            }
        }
        if let setting = try? await rows("SELECT current_setting('synchronous_commit')").first?.decode(String.self), setting == "off" {
            logger.warning(
                "PostgreSQL runs with synchronous_commit = off: a crash of PostgreSQL loses pushes the server already acknowledged, and clients never send them again; set it to on for Tandem's database (ALTER DATABASE … SET synchronous_commit = on)",
                metadata: ["database": "\(url.description)"])
        }
    }

    public func startNewEpoch() async throws -> UInt64 {
        try await pool.withTransaction { [logger, settledEpoch] connection in
            _ = try await Self.settleEpoch(connection, logger: logger)
            let epoch = StorageEpoch(value: Cursor.newEpoch(), identity: try await Self.identity(connection, logger: logger))
            try await Self.store(epoch, connection, logger: logger)
            settledEpoch.withLockedValue { $0 = epoch }
            return epoch.value
        }
    }

    /// Closes the pool's connections and the listener's.
    public func close() {
        listener.withLockedValue { $0?.close() }
        pool.close()
    }

    deinit { close() }

    /// Whether this node hears other nodes' pushes now.
    var isListening: Bool { listener.withLockedValue { $0?.listening.withLockedValue { $0 } ?? false } }

    /// The log heads of `datasets`.
    private func logHeads(_ datasets: [Int64]) async throws -> [Int64: Int64] {
        var heads: [Int64: Int64] = [:]
        for row in try await rows("SELECT id, log_head FROM datasets WHERE id = ANY(\(datasets))") {
            let (id, head) = try row.decode((Int64, Int64).self)
            heads[id] = head
        }
        return heads
    }

    private func transaction<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        try await pool.withTransaction(body)
    }

    private func rows(_ query: PostgresQuery) async throws -> [PostgresRow] {
        try await pool.withConnection { [logger] connection in try await connection.query(query, logger: logger).collect() }
    }

    // MARK: Users and tokens

    public func addUser(name: String, now: Int64, subject: String?) async throws -> ServerUser {
        // Unique whatever their case (users_name_folded): "Ann" is never a second "ann".
        let rows = try await rows("INSERT INTO users(name, created_at, jwt_subject) VALUES (\(name), \(now), \(subject)) ON CONFLICT DO NOTHING RETURNING id")
        guard let row = rows.first else {
            throw StorageError.conflict("user '\(name)' exists (user names are unique whatever their case), or the sign-in subject is bound to another user")
        }
        return ServerUser(id: try row.decode(Int64.self), name: name)
    }

    private static func user(_ row: PostgresRow) throws -> ServerUser {
        let (id, name, datasets, versions, bytes, isOperator) = try row.decode((Int64, String, Int?, Int?, Int64?, Bool).self)
        return ServerUser(id: id, name: name, quota: UserQuota(datasets: datasets, schemaVersions: versions, bytes: bytes), isOperator: isOperator)
    }

    public func users(now: Int64) async throws -> [UserSummary] {
        try await rows(
            """
            SELECT u.id, u.name, u.max_datasets, u.max_schema_versions, u.max_bytes, u.is_operator, u.created_at,
                   (SELECT COUNT(*) FROM datasets d WHERE d.owner_id = u.id),
                   (SELECT COUNT(*) FROM dataset_members m WHERE m.user_id = u.id),
                   (SELECT COUNT(*) FROM tokens t WHERE t.user_id = u.id AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > \(now)))
            FROM users u ORDER BY u.name
            """
        ).map { row in
            let (id, name, datasets, versions, bytes, isOperator, created, owned, memberships, tokens) = try row.decode(
                (Int64, String, Int?, Int?, Int64?, Bool, Int64, Int64, Int64, Int64).self)
            return UserSummary(
                user: ServerUser(id: id, name: name, quota: UserQuota(datasets: datasets, schemaVersions: versions, bytes: bytes), isOperator: isOperator),
                createdAt: created, datasets: Int(owned), memberships: Int(memberships), tokens: Int(tokens))
        }
    }

    public func removeUser(id: Int64) async throws {
        try await transaction { [logger] connection in
            guard
                let name = try await connection.query("SELECT name FROM users WHERE id = \(id) FOR UPDATE", logger: logger).collect().first?
                    .decode(String.self)
            else { throw StorageError.notFound("no user with id \(id)") }
            var owned: [String] = []
            for try await dataset in try await connection.query(
                "SELECT name FROM datasets WHERE owner_id = \(id) ORDER BY name COLLATE \"C\"", logger: logger
            ).decode(String.self) {
                owned.append(dataset)
            }
            guard owned.isEmpty else {
                throw StorageError.conflict("user '\(name)' owns datasets (\(owned.joined(separator: ", "))); delete them first")
            }
            try await connection.query("DELETE FROM tokens WHERE user_id = \(id)", logger: logger)
            try await connection.query("DELETE FROM dataset_members WHERE user_id = \(id)", logger: logger)
            try await connection.query("DELETE FROM users WHERE id = \(id)", logger: logger)
            try await connection.query("SELECT pg_notify(\(self.channel), \("u\(id) -"))", logger: logger)
        }
    }

    public func user(subject: String) async throws -> ServerUser? {
        try await rows("SELECT id, name, max_datasets, max_schema_versions, max_bytes, is_operator FROM users WHERE jwt_subject = \(subject)").first.map(Self.user)
    }

    public func user(named name: String) async throws -> ServerUser? {
        try await rows("SELECT id, name, max_datasets, max_schema_versions, max_bytes, is_operator FROM users WHERE name = \(name)").first.map(Self.user)
    }

    public func setOperator(user: Int64, _ isOperator: Bool) async throws {
        let rows = try await rows("UPDATE users SET is_operator = \(isOperator) WHERE id = \(user) RETURNING id")
        guard !rows.isEmpty else { throw StorageError.notFound("no user with id \(user)") }
    }

    public func setQuota(user: Int64, _ quota: UserQuota) async throws {
        let rows = try await rows(
            """
            UPDATE users SET max_datasets = \(quota.datasets), max_schema_versions = \(quota.schemaVersions), max_bytes = \(quota.bytes)
            WHERE id = \(user) RETURNING id
            """)
        guard !rows.isEmpty else { throw StorageError.notFound("no user with id \(user)") }
    }

    public func datasetOverviews() async throws -> [DatasetOverview] {
        try await rows(
            """
            SELECT d.id, o.name, d.name, d.created_at, d.stored_bytes,
                   (SELECT COUNT(*) FROM records r WHERE r.dataset_id = d.id), GREATEST(d.log_head, d.compacted_through), d.compacted_through,
                   (SELECT COUNT(*) FROM schema_versions s WHERE s.dataset_id = d.id),
                   (SELECT COUNT(*) FROM dataset_members m WHERE m.dataset_id = d.id)
            FROM datasets d JOIN users o ON o.id = d.owner_id ORDER BY o.name, d.name
            """
        ).map { row in
            let (id, owner, name, created, bytes, records, head, compacted, versions, members) = try row.decode(
                (Int64, String, String, Int64, Int64, Int64, Int64, Int64, Int64, Int64).self)
            return DatasetOverview(
                id: id, owner: owner, name: name, createdAt: created, storedBytes: bytes, records: Int(records), logHead: head,
                compactedThrough: compacted, schemaVersions: Int(versions), members: Int(members))
        }
    }

    public func storedBytes(owner: Int64) async throws -> Int64 {
        try await rows("SELECT COALESCE(SUM(stored_bytes), 0)::BIGINT FROM datasets WHERE owner_id = \(owner)").first?.decode(Int64.self) ?? 0
    }

    public func addToken(id: String, secretHash: String, user: Int64, scope: TokenScope, now: Int64) async throws {
        _ = try await rows(
            """
            INSERT INTO tokens(id, user_id, secret_hash, created_at, datasets, read_only, expires_at)
            VALUES (\(id), \(user), \(secretHash), \(now), \(scope.datasetsText), \(scope.readOnly), \(scope.expiresAt))
            """)
    }

    public func revokeToken(id: String) async throws -> Bool {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        // One statement: revoked and announced together, or neither.
        return try await !rows(
            """
            WITH revoked AS (UPDATE tokens SET revoked_at = \(now) WHERE id = \(id) AND revoked_at IS NULL RETURNING id, user_id)
            SELECT id, pg_notify(\(channel), 'u' || user_id || ' -') FROM revoked
            """
        ).isEmpty
    }

    public func token(id: String) async throws -> StoredToken? {
        guard
            let row = try await rows(
                """
                SELECT u.id, u.name, u.max_datasets, u.max_schema_versions, u.max_bytes, u.is_operator, t.secret_hash, t.datasets, t.read_only, t.expires_at
                FROM tokens t JOIN users u ON u.id = t.user_id WHERE t.id = \(id) AND t.revoked_at IS NULL
                """
            ).first
        else { return nil }
        let (id, name, datasets, versions, bytes, isOperator, hash, scoped, readOnly, expiresAt) = try row.decode(
            (Int64, String, Int?, Int?, Int64?, Bool, String, String?, Bool, Int64?).self)
        return StoredToken(
            user: ServerUser(id: id, name: name, quota: UserQuota(datasets: datasets, schemaVersions: versions, bytes: bytes), isOperator: isOperator),
            secretHash: hash,
            scope: TokenScope(datasets: TokenScope.datasets(fromText: scoped), readOnly: readOnly, expiresAt: expiresAt))
    }

    public func tokens(user: Int64?) async throws -> [TokenInfo] {
        var tokens: [TokenInfo] = []
        for row in try await rows(
            """
            SELECT t.id, u.name, t.created_at, t.revoked_at, t.datasets, t.read_only, t.expires_at FROM tokens t JOIN users u ON u.id = t.user_id
            WHERE \(user)::BIGINT IS NULL OR t.user_id = \(user) ORDER BY u.name COLLATE "C", t.created_at, t.id
            """)
        {
            let (id, name, created, revoked, scoped, readOnly, expiresAt) = try row.decode((String, String, Int64, Int64?, String?, Bool, Int64?).self)
            let scope = TokenScope(datasets: TokenScope.datasets(fromText: scoped), readOnly: readOnly, expiresAt: expiresAt)
            var names: [String] = []
            for dataset in scope.datasets ?? [] {
                if let found = try await rows("SELECT o.name || '/' || d.name FROM datasets d JOIN users o ON o.id = d.owner_id WHERE d.id = \(dataset)")
                    .first
                {
                    names.append(try found.decode(String.self))
                }
            }
            tokens.append(TokenInfo(id: id, user: name, createdAt: created, revokedAt: revoked, scope: scope, datasets: names))
        }
        return tokens
    }

    // MARK: Datasets and schemas

    private static func info(_ row: PostgresRow) throws -> DatasetInfo {
        let (name, created, version) = try row.decode((String, Int64, Int).self)
        return DatasetInfo(name: name, createdAt: created, schemaVersion: version)
    }

    private static let infoColumns: PostgresQuery = """
        SELECT d.name, d.created_at, COALESCE((SELECT MAX(version) FROM schema_versions s WHERE s.dataset_id = d.id), 0)::INT FROM datasets d
        """

    public func createDataset(owner: Int64, name: String, now: Int64, limit: Int) async throws -> (DatasetInfo, created: Bool) {
        try await transaction { [logger] connection in
            // The owner's row, locked: two nodes creating datasets for one user count one after the other.
            try await connection.query("SELECT id FROM users WHERE id = \(owner) FOR UPDATE", logger: logger)
            let existing = try await connection.query(
                "SELECT d.name, d.created_at, COALESCE((SELECT MAX(version) FROM schema_versions s WHERE s.dataset_id = d.id), 0)::INT FROM datasets d WHERE d.owner_id = \(owner) AND d.name = \(name)",
                logger: logger
            ).collect()
            if let row = existing.first { return (try Self.info(row), false) }
            let count =
                try await connection.query("SELECT COUNT(*)::BIGINT FROM datasets WHERE owner_id = \(owner)", logger: logger).collect()
                .first?.decode(Int64.self) ?? 0
            guard count < limit else { throw StorageError.datasetQuota(limit) }
            try await connection.query("INSERT INTO datasets(owner_id, name, created_at) VALUES (\(owner), \(name), \(now))", logger: logger)
            return (DatasetInfo(name: name, createdAt: now, schemaVersion: 0), true)
        }
    }

    public func datasets(owner: Int64) async throws -> [DatasetInfo] {
        // Names in byte order, as SQLite sorts them (the database's collation may not).
        try await rows(
            "SELECT d.name, d.created_at, COALESCE((SELECT MAX(version) FROM schema_versions s WHERE s.dataset_id = d.id), 0)::INT FROM datasets d WHERE d.owner_id = \(owner) ORDER BY d.name COLLATE \"C\""
        ).map(Self.info)
    }

    public func datasetID(owner: Int64, name: String) async throws -> Int64? {
        try await rows("SELECT id FROM datasets WHERE owner_id = \(owner) AND name = \(name)").first?.decode(Int64.self)
    }

    public func datasets(reachableBy user: Int64) async throws -> [ReachableDataset] {
        try await rows(
            """
            SELECT d.id, d.name, d.created_at, COALESCE((SELECT MAX(version) FROM schema_versions s WHERE s.dataset_id = d.id), 0)::INT,
                   o.name, r.role
            FROM (SELECT id AS dataset_id, 'admin' AS role FROM datasets WHERE owner_id = \(user)
                  UNION ALL SELECT dataset_id, role FROM dataset_members WHERE user_id = \(user)) r
            JOIN datasets d ON d.id = r.dataset_id JOIN users o ON o.id = d.owner_id
            ORDER BY o.name COLLATE "C", d.name COLLATE "C"
            """
        ).map { row in
            let (id, name, created, version, owner, role) = try row.decode((Int64, String, Int64, Int, String, String).self)
            return ReachableDataset(
                id: id, info: DatasetInfo(name: name, createdAt: created, schemaVersion: version, owner: owner, role: DatasetRole(rawValue: role)))
        }
    }

    public func deleteDataset(id: Int64) async throws -> Bool {
        try await transaction { [logger] connection in
            // The row lock orders the delete after any push holding it.
            guard try await !connection.query("SELECT id FROM datasets WHERE id = \(id) FOR UPDATE", logger: logger).collect().isEmpty else {
                return false
            }
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            try await connection.query(
                """
                INSERT INTO deleted_datasets(id, owner_id, name, deleted_at, stored_bytes)
                SELECT id, owner_id, name, \(now), stored_bytes FROM datasets WHERE id = \(id)
                """, logger: logger)
            try await connection.query("DELETE FROM dataset_members WHERE dataset_id = \(id)", logger: logger)
            try await connection.query("DELETE FROM schema_versions WHERE dataset_id = \(id)", logger: logger)
            try await connection.query("DELETE FROM datasets WHERE id = \(id)", logger: logger)
            try await connection.query("SELECT pg_notify(\(self.channel), \(String(id)) || ' -')", logger: logger)
            return true
        }
    }

    public func deletedDatasetIDs(owner: Int64, name: String) async throws -> [Int64] {
        try await rows("SELECT id FROM deleted_datasets WHERE owner_id = \(owner) AND name = \(name)").map { try $0.decode(Int64.self) }
    }

    public func purgeDeletedDatasets(limit: Int) async throws -> Int {
        try await transaction { [logger] connection in
            guard
                let id = try await connection.query(
                    "SELECT id FROM deleted_datasets WHERE NOT purged ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED", logger: logger
                )
                .collect().first?.decode(Int64.self)
            else { return 0 }
            var deleted = 0
            for table in ["log", "records", "lost_values", "idempotency", "unique_values", "merged_records", "link_members", "log_marks"] where deleted < limit {
                let removed = try await connection.query(
                    PostgresQuery(
                        unsafeSQL:
                            "DELETE FROM \(table) WHERE ctid IN (SELECT ctid FROM \(table) WHERE dataset_id = $1 LIMIT $2) RETURNING 1",
                        binds: {
                            var binds = PostgresBindings()
                            binds.append(id)
                            binds.append(Int64(limit - deleted))
                            return binds
                        }()),
                    logger: logger
                ).collect().count
                deleted += removed
            }
            if deleted == 0 {
                try await connection.query("UPDATE deleted_datasets SET purged = true WHERE id = \(id)", logger: logger)
                return 1
            }
            return deleted
        }
    }

    public func setMember(dataset: Int64, user: Int64, role: DatasetRole, now: Int64) async throws {
        _ = try await rows(
            """
            INSERT INTO dataset_members(dataset_id, user_id, role, added_at) VALUES (\(dataset), \(user), \(role.rawValue), \(now))
            ON CONFLICT (dataset_id, user_id) DO UPDATE SET role = excluded.role
            """)
    }

    public func removeMember(dataset: Int64, user: Int64) async throws -> Bool {
        // One statement: removed and announced together, or neither.
        try await !rows(
            """
            WITH removed AS (DELETE FROM dataset_members WHERE dataset_id = \(dataset) AND user_id = \(user) RETURNING user_id)
            SELECT user_id, pg_notify(\(channel), \(String(dataset)) || ' -') FROM removed
            """
        ).isEmpty
    }

    public func members(dataset: Int64) async throws -> [DatasetMember] {
        try await rows("SELECT u.name, m.role FROM dataset_members m JOIN users u ON u.id = m.user_id WHERE m.dataset_id = \(dataset) ORDER BY u.name")
            .compactMap { row in
                let (name, role) = try row.decode((String, String).self)
                return DatasetRole(rawValue: role).map { DatasetMember(user: name, role: $0) }
            }
    }

    public func role(dataset: Int64, user: Int64) async throws -> DatasetRole? {
        try await rows("SELECT role FROM dataset_members WHERE dataset_id = \(dataset) AND user_id = \(user)").first
            .flatMap { DatasetRole(rawValue: try $0.decode(String.self)) }
    }

    public func schemaHistory(dataset: Int64) async throws -> [SchemaVersionInfo] {
        try await rows("SELECT version, registered_at, schema FROM schema_versions WHERE dataset_id = \(dataset) ORDER BY version").map { row in
            let (version, at, schema) = try row.decode((Int, Int64, String).self)
            return SchemaVersionInfo(version: version, registeredAt: at, schema: schema)
        }
    }

    public func registerSchema(dataset: Int64, json: String, now: Int64, after versions: Int) async throws -> SchemaRegistration? {
        try await transaction { [logger] connection in
            try await connection.query("SELECT id FROM datasets WHERE id = \(dataset) FOR UPDATE", logger: logger)
            let count =
                try await connection.query("SELECT COUNT(*)::BIGINT FROM schema_versions WHERE dataset_id = \(dataset)", logger: logger)
                .collect().first?.decode(Int64.self) ?? 0
            guard count == versions else { return nil }
            try await connection.query(
                """
                WITH added AS (INSERT INTO schema_versions(dataset_id, version, schema, registered_at)
                               VALUES (\(dataset), \(versions + 1), \(json), \(now)))
                UPDATE datasets SET stored_bytes = stored_bytes + \(Int64(json.utf8.count)) WHERE id = \(dataset)
                """, logger: logger)
            return SchemaRegistration(version: versions + 1, created: true)
        }
    }

    // MARK: Pushes and pulls

    public func push(dataset: Int64, key: String, requestHash: String, now: Int64, changes: Int, job: PushJob) async throws -> StoredPush {
        let push = QueuedPush(key: key, requestHash: requestHash, now: now, changes: changes, job: job)
        return try await gate.submit(push, to: dataset, deadline: leaseDeadline) { pushes in await self.push(pushes, to: dataset) }
    }

    /// A push waiting at its dataset's gate.
    struct QueuedPush: Sendable {
        var key: String
        var requestHash: String
        var now: Int64
        var changes: Int
        var job: PushJob
    }

    /// The most pushes one transaction holds, and the most changes (one push of more runs
    /// alone): the transaction holds the dataset's lock, so it stays short.
    static let maxPushesPerTransaction = 16
    static let maxChangesPerTransaction = 2_000

    /// Runs the pushes that queued together in one transaction (group commit), each still all
    /// or nothing: a push that fails before writing fails alone. When one fails after
    /// writing (its statement failed, so the transaction is lost), each runs again in a
    /// transaction of its own.
    private func push(_ pushes: [QueuedPush], to dataset: Int64) async -> [Result<StoredPush, any Error>] {
        if pushes.count > 1, let results = try? await transactionalPush(pushes, to: dataset) { return results }
        var results: [Result<StoredPush, any Error>] = []
        for push in pushes {
            do { results.append(.success(try await transactionalPush([push], to: dataset)[0].get())) } catch { results.append(.failure(error)) }
        }
        return results
    }

    /// The pushes in one transaction; throws when the transaction is lost (a statement failed,
    /// PostgreSQL went away), and answers each push's own failure otherwise.
    private func transactionalPush(_ pushes: [QueuedPush], to dataset: Int64) async throws -> [Result<StoredPush, any Error>] {
        try await transaction { [logger] connection in
            // The ordering point (see the type's comment), held until the commit, then each
            // key's stored answer and the owner's stored bytes: one round trip, a function
            // whose statements each see what committed before them (the batch before this one).
            var head: Int64?
            var stored: Int64 = 0
            var tombstonesBefore: Int64 = 0
            var answered: [String: StoredPush] = [:]
            for row in try await connection.query("SELECT * FROM tandem_push_begin(\(dataset), \(pushes.map(\.key)))", logger: logger).collect() {
                let (at, bytes, key, hash, response, before) = try row.decode((Int64, Int64, String, String?, ByteBuffer?, Int64).self)
                (head, stored, tombstonesBefore) = (at, bytes, before)
                if let hash, let response { answered[key] = StoredPush(response: Data(response.readableBytesView), requestHash: hash, replayed: true) }
            }
            guard var head else { throw StorageError.notFound("the dataset was deleted") }
            var stores: [PostgresPushStore] = []
            var answers: [PostgresPushStore.Answer] = []
            // Several pushes: their records are written once, by the last statement.
            var records: PostgresPushStore.BatchRecords? = pushes.count > 1 ? PostgresPushStore.BatchRecords() : nil
            var results: [Result<StoredPush, any Error>] = []
            for push in pushes {
                // A key seen before, or earlier in this batch (a retry that queued behind its
                // first try): the first answer.
                if let first = answered[push.key] {
                    results.append(.success(StoredPush(response: first.response, requestHash: first.requestHash, replayed: true)))
                    continue
                }
                if let limit = push.job.byteLimit, stored >= limit {
                    results.append(.failure(StorageError.byteQuota(stored: stored, limit: limit)))
                    continue
                }
                var store = PostgresPushStore(
                    connection: connection, logger: logger, dataset: dataset, lastLogPosition: head, tombstonesBefore: tombstonesBefore, batch: records)
                let answer: Data
                do {
                    answer = try await PushWorkspace.perform(push.job, onAsync: &store)
                } catch {
                    // Nothing of it written: it fails alone. Else the transaction is lost.
                    if store.wroteToDatabase || error is PSQLError { throw error }
                    results.append(.failure(error))
                    continue
                }
                head = store.head
                records = store.batch
                stored += store.loggedBytes
                stores.append(store)
                answers.append(PostgresPushStore.Answer(key: push.key, requestHash: push.requestHash, response: answer, now: push.now))
                answered[push.key] = StoredPush(response: answer, requestHash: push.requestHash, replayed: false)
                results.append(.success(StoredPush(response: answer, requestHash: push.requestHash, replayed: false)))
            }
            let announce = self.announcesPushes.withLockedValue { $0 } ? (channel: self.channel, node: self.node) : nil
            try await PostgresPushStore.finish(stores, records: records, answers: answers, announce: announce, connection: connection, logger: logger)
            return results
        }
    }

    private static func logQuery(dataset: Int64, after position: Int64, limit: Int) -> PostgresQuery {
        """
        SELECT position, schema_version, change FROM log WHERE dataset_id = \(dataset) AND position > \(position)
        ORDER BY position LIMIT \(Int64(limit) + 1)
        """
    }

    public func pull(dataset: Int64, after position: Int64, limit: Int) async throws -> (entries: [LogEntry], hasMore: Bool) {
        let rows = try await rows(Self.logQuery(dataset: dataset, after: position, limit: limit))
        let entries = try rows.prefix(limit).map { row in
            let (at, version, change) = try row.decode((Int64, Int, ByteBuffer).self)
            return LogEntry(position: at, change: try WireJSONReader.change(Data(change.readableBytesView)), schemaVersion: version)
        }
        return (entries, rows.count > limit)
    }

    public func logHead(dataset: Int64) async throws -> Int64 {
        try await rows("SELECT log_head FROM datasets WHERE id = \(dataset)").first?.decode(Int64.self) ?? 0
    }

    public func pullJSON(dataset: Int64, after position: Int64, limit: Int, maxBytes: Int) async throws -> PulledPage {
        // Changes past the page's bytes come without their text (NULL): the page never holds
        // more than `maxBytes` of changes plus one in memory, however large the entries.
        let rows = try await rows(
            """
            SELECT position, schema_version, CASE WHEN before < \(Int64(maxBytes)) THEN change END FROM (
                SELECT position, schema_version, change,
                       SUM(octet_length(change)) OVER (ORDER BY position) - octet_length(change) AS before
                FROM log WHERE dataset_id = \(dataset) AND position > \(position) ORDER BY position LIMIT \(Int64(limit) + 1)
            ) AS page ORDER BY position
            """)
        var page = PageWriter(limit: limit, maxBytes: maxBytes)
        for row in rows where page.hasRoom {
            let (at, version, change) = try row.decode((Int64, Int, ByteBuffer?).self)
            guard let change else { break }
            // Log changes are stored as the JSON of a WireChange: spliced as they are.
            page.add(position: at) { $0.logEntry(position: at, schemaVersion: version) { $0.rawJSON(change.readableBytesView) } }
        }
        return page.finish(hasMore: page.count < rows.count)
    }

    public func records(dataset: Int64, after uri: String, limit: Int, maxBytes: Int) async throws -> (records: [StoredRecord], hasMore: Bool) {
        // `uri` is COLLATE "C": byte order, as the SQLite storage sorts. States past the
        // page's bytes come without their bytes (NULL), as pull pages do.
        let rows = try await rows(
            """
            SELECT page.uri, CASE WHEN page.before < \(Int64(maxBytes)) THEN page.state END, m.survivor, m.stamp FROM (
                SELECT uri, state, SUM(octet_length(state)) OVER (ORDER BY uri) - octet_length(state) AS before
                FROM records WHERE dataset_id = \(dataset) AND uri > \(uri) ORDER BY uri LIMIT \(Int64(limit) + 1)
            ) AS page LEFT JOIN merged_records m ON m.dataset_id = \(dataset) AND m.uri = page.uri ORDER BY page.uri
            """)
        var records: [StoredRecord] = []
        for row in rows.prefix(limit) {
            let (uri, state, survivor, stamp) = try row.decode((String, ByteBuffer?, String?, String?).self)
            guard let state else { break }
            let merged = survivor.flatMap { s in stamp.flatMap { HLCTimestamp($0) }.map { (s, $0) } }
            records.append(StoredRecord(uri: uri, state: try RecordState(stored: Data(state.readableBytesView)), merged: merged))
        }
        return (records, records.count < rows.count)
    }

    private static func compactionState(_ row: PostgresRow) throws -> CompactionState {
        let (id, head, through, before) = try row.decode((Int64, Int64, Int64, Int64).self)
        return CompactionState(dataset: id, head: head, compactedThrough: through, tombstonesBefore: before)
    }

    public func compaction(dataset: Int64) async throws -> CompactionState {
        guard let row = try await rows("SELECT id, log_head, compacted_through, tombstones_before FROM datasets WHERE id = \(dataset)").first else {
            throw StorageError.notFound("no dataset with id \(dataset)")
        }
        return try Self.compactionState(row)
    }

    public func compactionStates() async throws -> [CompactionState] {
        try await rows("SELECT id, log_head, compacted_through, tombstones_before FROM datasets ORDER BY id").map(Self.compactionState)
    }

    public func addLogMark(dataset: Int64, position: Int64, at: Int64) async throws {
        _ = try await rows(
            "INSERT INTO log_marks(dataset_id, position, at) SELECT id, \(position), \(at) FROM datasets WHERE id = \(dataset) ON CONFLICT DO NOTHING")
    }

    public func logMark(dataset: Int64, notAfter at: Int64?, notPast position: Int64?) async throws -> LogMark? {
        try await rows(
            """
            SELECT position, at FROM log_marks WHERE dataset_id = \(dataset) AND at <= \(at ?? .max) AND position <= \(position ?? .max)
            ORDER BY position DESC LIMIT 1
            """
        ).first.map { row in
            let (position, at) = try row.decode((Int64, Int64).self)
            return LogMark(position: position, at: at)
        }
    }

    public func compactLog(dataset: Int64, through: Int64, limit: Int) async throws -> Int {
        try await transaction { [logger] connection in
            // The dataset's row, locked as a push locks it: the two take turns, briefly.
            guard
                let row = try await connection.query(
                    "SELECT compacted_through, log_head FROM datasets WHERE id = \(dataset) FOR UPDATE", logger: logger
                ).collect().first
            else { return 0 }
            let (from, head) = try row.decode((Int64, Int64).self)
            let end = min(through, head - 1, from + Int64(limit))
            guard end > from else { return 0 }
            let rows = try await connection.query(
                "DELETE FROM log WHERE dataset_id = \(dataset) AND position > \(from) AND position <= \(end) RETURNING octet_length(change)::BIGINT",
                logger: logger
            ).collect()
            let bytes = try rows.reduce(Int64(0)) { $0 + (try $1.decode(Int64.self)) }
            try await connection.query(
                """
                UPDATE datasets SET compacted_through = \(end), stored_bytes = GREATEST(stored_bytes - \(bytes), 0),
                                    compacted_bytes = compacted_bytes + LEAST(\(bytes), stored_bytes) WHERE id = \(dataset)
                """, logger: logger)
            try await connection.query(
                """
                DELETE FROM log_marks WHERE dataset_id = \(dataset)
                AND position < (SELECT MAX(position) FROM log_marks WHERE dataset_id = \(dataset) AND position <= \(end))
                """, logger: logger)
            return max(rows.count, 1)
        }
    }

    public func pruneTombstones(dataset: Int64, before: Int64, after uri: String, limit: Int) async throws -> (last: String?, pruned: Int) {
        try await transaction { [logger] connection in
            try await connection.query(
                "UPDATE datasets SET tombstones_before = GREATEST(tombstones_before, \(before)) WHERE id = \(dataset)", logger: logger)
            var last: String?
            var tombstones: [String] = []
            for row in try await connection.query(
                "SELECT uri, state FROM records WHERE dataset_id = \(dataset) AND uri > \(uri) ORDER BY uri LIMIT \(Int64(limit))", logger: logger
            ).collect() {
                let (uri, state) = try row.decode((String, ByteBuffer).self)
                last = uri
                if try RecordState(stored: Data(state.readableBytesView)).isTombstone(before: before) { tombstones.append(uri) }
            }
            if !tombstones.isEmpty {
                try await connection.query("DELETE FROM records WHERE dataset_id = \(dataset) AND uri = ANY(\(tombstones))", logger: logger)
            }
            return (last, tombstones.count)
        }
    }

    public func pruneIdempotencyKeys(before cutoff: Int64) async throws -> Int {
        try await rows("DELETE FROM idempotency WHERE created_at < \(cutoff) RETURNING 1").count
    }

    public func checkHealth() async throws {
        _ = try await rows("SELECT 1")
    }
}

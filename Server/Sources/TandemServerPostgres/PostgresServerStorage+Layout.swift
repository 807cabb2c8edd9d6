import Logging
import PostgresNIO
import TandemServer

extension PostgresServerStorage {
    /// One step of the storage's layout: applied once, in order, and recorded in
    /// `tandem_migrations`.
    struct Migration {
        var version: Int
        var statements: [PostgresQuery]
    }

    /// The layout, step by step. Until the first release the steps may be rewritten (a new
    /// database is made, nothing is upgraded); after it, steps are only added.
    ///
    /// Per dataset: `log_head`, the position of its last log entry, is the dataset's ordering
    /// point: a push locks the dataset's row (`FOR UPDATE`) before anything else and moves
    /// `log_head` in the same transaction (see ``PostgresServerStorage/push(dataset:key:requestHash:now:changes:job:)``).
    static let migrations: [Migration] = [
        Migration(
            version: 1,
            statements: [
                """
                CREATE TABLE users(id BIGSERIAL PRIMARY KEY, name TEXT NOT NULL UNIQUE, created_at BIGINT NOT NULL,
                                   max_datasets BIGINT, max_schema_versions BIGINT, max_bytes BIGINT)
                """,
                """
                CREATE TABLE tokens(id TEXT PRIMARY KEY, user_id BIGINT NOT NULL REFERENCES users(id), secret_hash TEXT NOT NULL,
                                    created_at BIGINT NOT NULL, revoked_at BIGINT)
                """,
                """
                CREATE TABLE datasets(id BIGSERIAL PRIMARY KEY, owner_id BIGINT NOT NULL REFERENCES users(id), name TEXT NOT NULL,
                                      created_at BIGINT NOT NULL, stored_bytes BIGINT NOT NULL DEFAULT 0,
                                      log_head BIGINT NOT NULL DEFAULT 0, UNIQUE(owner_id, name))
                """,
                """
                CREATE TABLE schema_versions(dataset_id BIGINT NOT NULL REFERENCES datasets(id), version INT NOT NULL,
                                             schema TEXT NOT NULL, registered_at BIGINT NOT NULL, PRIMARY KEY(dataset_id, version))
                """,
                "CREATE TABLE records(dataset_id BIGINT NOT NULL, uri TEXT NOT NULL, state BYTEA NOT NULL, PRIMARY KEY(dataset_id, uri))",
                """
                CREATE TABLE log(dataset_id BIGINT NOT NULL, position BIGINT NOT NULL, schema_version INT NOT NULL,
                                 change BYTEA NOT NULL, PRIMARY KEY(dataset_id, position))
                """,
                """
                CREATE TABLE lost_values(id BIGSERIAL PRIMARY KEY, dataset_id BIGINT NOT NULL, uri TEXT NOT NULL, position BIGINT,
                                         lost BYTEA NOT NULL, at BIGINT NOT NULL)
                """,
                """
                CREATE TABLE idempotency(dataset_id BIGINT NOT NULL, key TEXT NOT NULL, request_hash TEXT NOT NULL,
                                         response BYTEA NOT NULL, created_at BIGINT NOT NULL, PRIMARY KEY(dataset_id, key))
                """,
                "CREATE INDEX idempotency_created_at ON idempotency(created_at)",
                """
                CREATE TABLE unique_values(dataset_id BIGINT NOT NULL, entity TEXT NOT NULL, key TEXT NOT NULL, uri TEXT NOT NULL,
                                           PRIMARY KEY(dataset_id, entity, key))
                """,
                """
                CREATE TABLE merged_records(dataset_id BIGINT NOT NULL, uri TEXT NOT NULL, survivor TEXT NOT NULL, stamp TEXT NOT NULL,
                                            state BYTEA, remade TEXT, PRIMARY KEY(dataset_id, uri))
                """,
                """
                CREATE TABLE link_members(dataset_id BIGINT NOT NULL, member TEXT NOT NULL, owner TEXT NOT NULL, field TEXT NOT NULL,
                                          PRIMARY KEY(dataset_id, member, owner, field))
                """,
                "CREATE TABLE server_keys(name TEXT PRIMARY KEY, key BYTEA NOT NULL)",
            ])
    ]

    /// The newest layout this server makes.
    public static var layoutVersion: Int { migrations.map(\.version).max() ?? 0 }

    /// The key of `pg_advisory_xact_lock` under which nodes migrate: the first node of a new
    /// version migrates, the others wait and find it done.
    static let migrationLock: Int64 = 0x7461_6e64_656d_0001

    /// Applies the steps `tandem_migrations` does not list, under the migration lock, in one
    /// transaction; makes the cursor key with the first.
    ///
    /// - Throws: ``StorageError/unavailable(_:)`` when the database was migrated by a newer
    ///   tandem-server (it lists a step this one does not know), or holds tables of something
    ///   else.
    static func migrate(_ connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("SELECT pg_advisory_xact_lock(\(migrationLock))", logger: logger)
        try await connection.query(
            "CREATE TABLE IF NOT EXISTS tandem_migrations(version INT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())",
            logger: logger)
        var applied: Set<Int> = []
        for try await version in try await connection.query("SELECT version FROM tandem_migrations", logger: logger).decode(Int.self) {
            applied.insert(version)
        }
        let known = Set(migrations.map(\.version))
        if let newer = applied.subtracting(known).max() {
            throw StorageError.unavailable(
                "the PostgreSQL database was migrated to layout \(newer) by a newer tandem-server; this one knows layouts up to \(known.max() ?? 0). Run the newer version (see docs/server.md, rolling upgrades)"
            )
        }
        if applied.isEmpty {
            let tables =
                try await connection.query(
                    "SELECT COUNT(*)::BIGINT FROM pg_tables WHERE schemaname = current_schema() AND tablename <> 'tandem_migrations'", logger: logger
                ).collect().first?.decode(Int64.self) ?? 0
            guard tables == 0 else {
                throw StorageError.unavailable(
                    "the PostgreSQL database holds \(tables) tables of something else and no tandem-server layout; give tandem-server a database of its own")
            }
        }
        for migration in migrations where !applied.contains(migration.version) {
            for statement in migration.statements { try await connection.query(statement, logger: logger) }
            try await connection.query("INSERT INTO tandem_migrations(version) VALUES (\(migration.version))", logger: logger)
            logger.notice("migrated the PostgreSQL layout", metadata: ["version": "\(migration.version)"])
        }
        try await connection.query(
            "INSERT INTO server_keys(name, key) VALUES ('cursor', \(ByteBuffer(bytes: Cursor.newKey()))) ON CONFLICT (name) DO NOTHING",
            logger: logger)
    }
}

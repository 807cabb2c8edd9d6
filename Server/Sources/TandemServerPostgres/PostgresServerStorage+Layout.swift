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
    /// Text is compared byte by byte (`COLLATE "C"`): record URIs and keys are identifiers,
    /// and a locale's collation made each index probe several times slower (a push's check
    /// of 100 new URIs took 2 ms under `C.UTF-8`).
    ///
    /// Per dataset: `log_head`, the position of its last log entry, is the dataset's ordering
    /// point: a push locks the dataset's row (`FOR UPDATE`) before anything else and moves
    /// `log_head` in the same transaction (see ``PostgresServerStorage/push(dataset:key:requestHash:now:changes:job:)``).
    static let migrations: [Migration] = [
        Migration(
            version: 1,
            statements: [
                """
                CREATE TABLE users(id BIGSERIAL PRIMARY KEY, name TEXT COLLATE "C" NOT NULL UNIQUE, created_at BIGINT NOT NULL,
                                   max_datasets BIGINT, max_schema_versions BIGINT, max_bytes BIGINT)
                """,
                """
                CREATE TABLE tokens(id TEXT COLLATE "C" PRIMARY KEY, user_id BIGINT NOT NULL REFERENCES users(id), secret_hash TEXT COLLATE "C" NOT NULL,
                                    created_at BIGINT NOT NULL, revoked_at BIGINT)
                """,
                """
                CREATE TABLE datasets(id BIGSERIAL PRIMARY KEY, owner_id BIGINT NOT NULL REFERENCES users(id), name TEXT COLLATE "C" NOT NULL,
                                      created_at BIGINT NOT NULL, stored_bytes BIGINT NOT NULL DEFAULT 0,
                                      log_head BIGINT NOT NULL DEFAULT 0, UNIQUE(owner_id, name))
                """,
                """
                CREATE TABLE dataset_members(dataset_id BIGINT NOT NULL REFERENCES datasets(id), user_id BIGINT NOT NULL REFERENCES users(id),
                                             role TEXT COLLATE "C" NOT NULL, added_at BIGINT NOT NULL, PRIMARY KEY(dataset_id, user_id))
                """,
                """
                CREATE TABLE schema_versions(dataset_id BIGINT NOT NULL REFERENCES datasets(id), version INT NOT NULL,
                                             schema TEXT COLLATE "C" NOT NULL, registered_at BIGINT NOT NULL, PRIMARY KEY(dataset_id, version))
                """,
                "CREATE TABLE records(dataset_id BIGINT NOT NULL, uri TEXT COLLATE \"C\" NOT NULL, state BYTEA NOT NULL, PRIMARY KEY(dataset_id, uri))",
                """
                CREATE TABLE log(dataset_id BIGINT NOT NULL, position BIGINT NOT NULL, schema_version INT NOT NULL,
                                 change BYTEA NOT NULL, PRIMARY KEY(dataset_id, position))
                """,
                """
                CREATE TABLE lost_values(id BIGSERIAL PRIMARY KEY, dataset_id BIGINT NOT NULL, uri TEXT COLLATE "C" NOT NULL, position BIGINT,
                                         lost BYTEA NOT NULL, at BIGINT NOT NULL)
                """,
                """
                CREATE TABLE idempotency(dataset_id BIGINT NOT NULL, key TEXT COLLATE "C" NOT NULL, request_hash TEXT COLLATE "C" NOT NULL,
                                         response BYTEA NOT NULL, created_at BIGINT NOT NULL, PRIMARY KEY(dataset_id, key))
                """,
                "CREATE INDEX idempotency_created_at ON idempotency(created_at)",
                """
                CREATE TABLE unique_values(dataset_id BIGINT NOT NULL, entity TEXT COLLATE "C" NOT NULL, key TEXT COLLATE "C" NOT NULL, uri TEXT COLLATE "C" NOT NULL,
                                           PRIMARY KEY(dataset_id, entity, key))
                """,
                """
                CREATE TABLE merged_records(dataset_id BIGINT NOT NULL, uri TEXT COLLATE "C" NOT NULL, survivor TEXT COLLATE "C" NOT NULL, stamp TEXT COLLATE "C" NOT NULL,
                                            state BYTEA, remade TEXT COLLATE "C", PRIMARY KEY(dataset_id, uri))
                """,
                """
                CREATE TABLE link_members(dataset_id BIGINT NOT NULL, member TEXT COLLATE "C" NOT NULL, owner TEXT COLLATE "C" NOT NULL, field TEXT COLLATE "C" NOT NULL,
                                          PRIMARY KEY(dataset_id, member, owner, field))
                """,
                "CREATE TABLE server_keys(name TEXT COLLATE \"C\" PRIMARY KEY, key BYTEA NOT NULL)",
                // A batch of pushes' first round trip: the dataset's row lock (the ordering
                // point), then, in a statement of its own (a fresh snapshot: it sees the batch
                // that held the lock before), each key's stored answer and the owner's stored
                // bytes, a row per key. No row: no such dataset.
                """
                CREATE FUNCTION tandem_push_begin(p_dataset BIGINT, p_keys TEXT[])
                RETURNS TABLE(o_head BIGINT, o_stored BIGINT, o_key TEXT, o_hash TEXT, o_response BYTEA)
                LANGUAGE plpgsql VOLATILE AS $$
                DECLARE
                    v_head BIGINT;
                    v_owner BIGINT;
                BEGIN
                    SELECT d.log_head, d.owner_id INTO v_head, v_owner FROM datasets d WHERE d.id = p_dataset FOR UPDATE;
                    IF NOT FOUND THEN RETURN; END IF;
                    RETURN QUERY
                        SELECT v_head, (SELECT COALESCE(SUM(s.stored_bytes), 0)::BIGINT FROM datasets s WHERE s.owner_id = v_owner),
                               k.key::TEXT, i.request_hash::TEXT, i.response
                        FROM unnest(p_keys) AS k(key)
                        LEFT JOIN idempotency i ON i.dataset_id = p_dataset AND i.key = k.key COLLATE "C";
                END
                $$
                """,
            ]),
        // Sharing: scoped tokens, dataset deletion (the data purged in steps), and the
        // lookups by user and dataset those need.
        Migration(
            version: 2,
            statements: [
                "ALTER TABLE tokens ADD COLUMN datasets TEXT COLLATE \"C\", ADD COLUMN read_only BOOLEAN NOT NULL DEFAULT false, ADD COLUMN expires_at BIGINT",
                "CREATE INDEX tokens_user ON tokens(user_id)",
                "CREATE UNIQUE INDEX users_name_folded ON users(lower(name))",
                "ALTER TABLE users ADD COLUMN jwt_subject TEXT COLLATE \"C\"",
                "CREATE UNIQUE INDEX users_jwt_subject ON users(jwt_subject)",
                "CREATE INDEX dataset_members_user ON dataset_members(user_id)",
                "CREATE INDEX lost_values_dataset ON lost_values(dataset_id)",
                """
                CREATE TABLE deleted_datasets(id BIGINT PRIMARY KEY, owner_id BIGINT NOT NULL, name TEXT COLLATE "C" NOT NULL, deleted_at BIGINT NOT NULL,
                                              stored_bytes BIGINT NOT NULL, purged BOOLEAN NOT NULL DEFAULT false)
                """,
                "CREATE INDEX deleted_datasets_name ON deleted_datasets(owner_id, name)",
            ]),
        // Compaction: how far each dataset's log was folded into its records, how old its
        // pruned tombstones were, and marks that date the log (docs/server.md, compaction).
        Migration(
            version: 3,
            statements: [
                """
                ALTER TABLE datasets ADD COLUMN compacted_through BIGINT NOT NULL DEFAULT 0, ADD COLUMN tombstones_before BIGINT NOT NULL DEFAULT 0,
                                     ADD COLUMN compacted_bytes BIGINT NOT NULL DEFAULT 0
                """,
                "CREATE TABLE log_marks(dataset_id BIGINT NOT NULL, position BIGINT NOT NULL, at BIGINT NOT NULL, PRIMARY KEY(dataset_id, position))",
                // The push's ordering point answers the tombstone horizon too.
                "DROP FUNCTION tandem_push_begin(BIGINT, TEXT[])",
                """
                CREATE FUNCTION tandem_push_begin(p_dataset BIGINT, p_keys TEXT[])
                RETURNS TABLE(o_head BIGINT, o_stored BIGINT, o_key TEXT, o_hash TEXT, o_response BYTEA, o_tombstones_before BIGINT)
                LANGUAGE plpgsql VOLATILE AS $$
                DECLARE
                    v_head BIGINT;
                    v_owner BIGINT;
                    v_before BIGINT;
                BEGIN
                    SELECT d.log_head, d.owner_id, d.tombstones_before INTO v_head, v_owner, v_before FROM datasets d WHERE d.id = p_dataset FOR UPDATE;
                    IF NOT FOUND THEN RETURN; END IF;
                    RETURN QUERY
                        SELECT v_head, (SELECT COALESCE(SUM(s.stored_bytes), 0)::BIGINT FROM datasets s WHERE s.owner_id = v_owner),
                               k.key::TEXT, i.request_hash::TEXT, i.response, v_before
                        FROM unnest(p_keys) AS k(key)
                        LEFT JOIN idempotency i ON i.dataset_id = p_dataset AND i.key = k.key COLLATE "C";
                END
                $$
                """,
            ]),
        // Operators: users whose token opens the dashboard (`/admin`).
        Migration(version: 4, statements: ["ALTER TABLE users ADD COLUMN is_operator BOOLEAN NOT NULL DEFAULT false"]),
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

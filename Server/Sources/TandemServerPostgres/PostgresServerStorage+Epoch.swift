import Logging
import NIOConcurrencyHelpers
import PostgresNIO
import TandemServer

extension PostgresServerStorage {
    /// The key of `pg_advisory_xact_lock` under which nodes settle the epoch: the first to
    /// find the database somewhere new starts the new epoch, the others read it.
    static let epochLock: Int64 = 0x7461_6e64_656d_0002

    /// Where the data is: the cluster's system identifier, the database's OID (and its table
    /// of keys') and the timeline PostgreSQL writes on. A `pg_dump` restored into a database
    /// has another OID (restored over the same database, `pg_restore --clean`, new tables);
    /// a physical backup recovered to a point in time, or a standby promoted, writes on a
    /// new timeline. Where the control functions are not allowed (some hosted services),
    /// the OID alone.
    static func identity(_ connection: PostgresConnection, logger: Logger) async throws -> String {
        // The database's OID, and the OID of its table of keys: a restore over the same
        // database (pg_restore --clean) makes the tables again.
        let row = try await connection.query(
            "SELECT oid::BIGINT, 'server_keys'::regclass::oid::BIGINT FROM pg_database WHERE datname = current_database()", logger: logger
        ).collect().first
        var (database, table): (Int64, Int64) = (0, 0)
        if let row { (database, table) = try row.decode((Int64, Int64).self) }
        let oid = "\(database).\(table)"
        try await connection.query("SAVEPOINT tandem_identity", logger: logger)
        do {
            let row = try await connection.query(
                "SELECT system_identifier::TEXT, substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8) FROM pg_control_system()", logger: logger
            ).collect().first
            try await connection.query("RELEASE SAVEPOINT tandem_identity", logger: logger)
            if let (system, timeline) = try row?.decode((String, String).self) {
                return "postgres:\(system):\(oid):\(timeline)"
            }
        } catch {
            try await connection.query("ROLLBACK TO SAVEPOINT tandem_identity", logger: logger)
        }
        return "postgres:\(oid)"
    }

    /// Reads the stored epoch and starts a new one when the database is somewhere new
    /// (``StorageEpoch``), under the epoch lock, in the caller's transaction.
    static func settleEpoch(_ connection: PostgresConnection, logger: Logger) async throws -> (StorageEpoch, reason: String?) {
        try await connection.query("SELECT pg_advisory_xact_lock(\(epochLock))", logger: logger)
        let identity = try await identity(connection, logger: logger)
        var stored: [String: ByteBuffer] = [:]
        for try await (name, key) in try await connection.query("SELECT name, key FROM server_keys WHERE name IN ('epoch', 'identity')", logger: logger)
            .decode((String, ByteBuffer).self)
        {
            stored[name] = key
        }
        let previous = stored["epoch"].flatMap { epoch in
            stored["identity"].flatMap { StorageEpoch(bytes: [UInt8](epoch.readableBytesView), identity: String(buffer: $0)) }
        }
        let (epoch, reason) = StorageEpoch.settle(stored: previous, identity: identity)
        if reason != nil { try await store(epoch, connection, logger: logger) }
        return (epoch, reason)
    }

    static func store(_ epoch: StorageEpoch, _ connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            """
            INSERT INTO server_keys(name, key) VALUES ('epoch', \(ByteBuffer(bytes: epoch.bytes))), ('identity', \(ByteBuffer(string: epoch.identity)))
            ON CONFLICT (name) DO UPDATE SET key = excluded.key
            """, logger: logger)
    }

    /// How many other `tandem-server` nodes are connected to this database now (their
    /// `application_name`): `storage copy` and `storage new-epoch` refuse to run beside them,
    /// as a running node keeps the epoch and cursor key it read.
    public func connectedNodes() async throws -> Int {
        try await pool.withConnection { [logger] connection in
            try await connection.query(
                """
                SELECT COUNT(*)::BIGINT FROM pg_stat_activity
                WHERE datname = current_database() AND application_name = \(Self.nodeApplicationName) AND pid <> pg_backend_pid()
                """, logger: logger
            ).collect().first.map { Int(try $0.decode(Int64.self)) } ?? 0
        }
    }

    /// The `application_name` of a serving node's connections.
    public static let nodeApplicationName = "tandem-server"

    /// Settles the epoch on a new pool after an outage: PostgreSQL may have come back as
    /// another database (a promoted standby, a restore); cursors of the history before are
    /// then refused from the first request the node serves again.
    static func settleEpoch(on client: PostgresClient, into epoch: NIOLockedValueBox<StorageEpoch>, logger: Logger) async throws {
        let (settled, reason) = try await client.withTransaction(logger: logger) { connection in
            try await settleEpoch(connection, logger: logger)
        }
        epoch.withLockedValue { $0 = settled }
        if let reason { logger.notice("a new epoch starts: every client resyncs from the start", metadata: ["reason": "\(reason)"]) }
    }
}

internal import TandemWAL

/// Opening a store file: inspection without writing, migration in one transaction.
///
/// A Tandem store keeps its metadata in `tandem_metadata` (key/value): `formatVersion` (the
/// store file format, see ``StoreFile/formatVersion``), `dataset`, and `schema` (the
/// canonical schema JSON), `node` (the store's HLC node id, 16 hex digits), `hlc` (the
/// latest HLC stamp issued or received), `received` (the latest received from a sync: a
/// repair of a clock that ran ahead stamps after it), `serverClock` (the last reading of the
/// sync server's clock, ``ServerClockReading``). Entity tables are named after entities; the
/// change journal's tables and triggers are described in ``JournalDDL``.
///
/// The format is 3 (tables, metadata and the change journal; 3: the journal triggers run
/// `WHEN tandem_journal_on()`). Until Tandem's first release a
/// file of another format is refused, not upgraded.
enum StoreFile {
    /// The version of the store file layout. Bump it when the layout of Tandem's own tables
    /// or the column scheme changes.
    static let formatVersion = 3

    struct Opened {
        var writer: any DatabaseWriter
        var dataset: String
        var journal: JournalContext
        /// Checkpoints the file's write-ahead log off the writing connection (`nil` in memory).
        var checkpointer: WALCheckpointer?
    }

    struct Stored {
        var schema: Schema
        var dataset: String
    }

    /// - Parameter schema: the schema as declared (see ``ModelContainer/declaredSchema``).
    static func open(configuration: ModelConfiguration, schema: Schema, mappings: [EntityMapping]) throws -> Opened {
        if let dataset = configuration.dataset, !DatasetName.isValid(dataset) {
            throw StoreError(.misuse, "dataset '\(dataset)' must be 1–128 letters, digits, '-', '_' or '.', and not '.' or '..'")
        }
        let state = JournalState()
        // A commit that takes the log past 1 000 pages no longer copies them back itself.
        let checkpointer = configuration.isStoredInMemoryOnly ? nil : configuration.url.map { WALCheckpointer(path: $0.path(percentEncoded: false)) }
        var config = Configuration()
        config.busyMode = .timeout(configuration.busyTimeout)
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            if !db.configuration.readonly {
                try db.execute(sql: "PRAGMA cache_size = \(-max(configuration.writerCacheSize / 1024, 1))")
                checkpointer?.install(on: db)
            }
            SQLFunctions.register(in: db)
            try state.register(in: db)
        }
        let writer: any DatabaseWriter
        var stored: Stored?
        if configuration.isStoredInMemoryOnly {
            writer = try DatabaseQueue(configuration: config)
        } else {
            guard let url = configuration.url else { throw StoreError(.misuse, "a file store needs a URL") }
            let path = url.path(percentEncoded: false)
            stored = try inspect(path: path, busyTimeout: configuration.busyTimeout)
            if let stored {
                // Refuse before the file is opened for writing, so a refused open changes nothing.
                _ = try plan(from: stored.schema.stored, to: schema.stored)
                if let wanted = configuration.dataset, wanted != stored.dataset {
                    throw StoreError(.misuse, "the store at \(path) belongs to dataset '\(stored.dataset)', not '\(wanted)'; record URIs depend on it, so it cannot change")
                }
            }
            writer = try StoreErrorMapping.map(path: path) { try DatabasePool(path: path, configuration: config) }
        }
        var dataset = stored?.dataset ?? configuration.dataset ?? ModelConfiguration.defaultDataset
        var node: UInt64 = 0
        try StoreErrorMapping.map {
            try writer.writeWithoutTransaction { db in
                try db.inTransaction(.immediate) {
                    // Re-read inside the write transaction: another process may have created or
                    // migrated the store meanwhile.
                    let current = try readMetadata(db)
                    if let current {
                        dataset = current.dataset
                        try Migrator.apply(try plan(from: current.schema.stored, to: schema.stored), declared: schema, mappings: mappings, db: db)
                    } else {
                        try db.execute(sql: "CREATE TABLE tandem_metadata (key TEXT NOT NULL PRIMARY KEY, value TEXT NOT NULL)")
                        try setMetadata("dataset", dataset, db)
                        try createJournal(db)
                        try Migrator.apply(try plan(from: Schema(entities: []), to: schema.stored), declared: schema, mappings: mappings, db: db)
                    }
                    try setMetadata("formatVersion", String(formatVersion), db)
                    node = try readNode(db)
                    return .commit
                }
            }
        }
        return Opened(writer: writer, dataset: dataset, journal: JournalContext(state: state, node: node, clock: configuration.clock), checkpointer: checkpointer)
    }

    /// The journal tables and this file's HLC node id.
    private static func createJournal(_ db: Database) throws {
        for sql in JournalDDL.createTables { try db.execute(sql: sql) }
        var node: UInt64 = 0
        while node == 0 { node = UInt64.random(in: 1...UInt64.max) }
        try setMetadata("node", String(node, radix: 16), db)
    }

    private static func readNode(_ db: Database) throws -> UInt64 {
        guard let text = try String.fetchOne(db, sql: "SELECT value FROM tandem_metadata WHERE key = 'node'"),
            let node = UInt64(text, radix: 16), node != 0
        else {
            throw StoreError(.corruptFile, "the store's tandem_metadata has no valid HLC node id")
        }
        return node
    }

    static func plan(from stored: Schema, to schema: Schema) throws -> MigrationPlan {
        do {
            return try MigrationPlan(from: stored, to: schema)
        } catch let error as SchemaError {
            let first = error.changes.first
            throw StoreError(.schemaMismatch, error.message, entity: first?.entity, attribute: first?.attribute, underlying: error)
        }
    }

    /// Reads a file's metadata without writing to it; `nil` for a new or empty database.
    /// Reads a file's stored schema and dataset without writing. Waits up to `busyTimeout`
    /// seconds for another process's lock (a daemon syncing the same store), as writes do.
    static func inspect(path: String, busyTimeout: TimeInterval = 5) throws -> Stored? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let size = (try? URL(filePath: path).resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0
        if size == 0 { return nil }
        var config = Configuration()
        config.readonly = true
        config.busyMode = .timeout(busyTimeout)
        return try StoreErrorMapping.map(path: path) {
            let queue = try DatabaseQueue(path: path, configuration: config)
            defer { try? queue.close() }
            return try queue.read { db in
                let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
                if tables.isEmpty { return nil }
                guard tables.contains("tandem_metadata") else {
                    throw StoreError(.foreignFile, "\(path) is a SQLite database but not a Tandem store (it has no tandem_metadata table); open a Tandem store, or a new path")
                }
                guard let stored = try readMetadata(db) else {
                    throw StoreError(.corruptFile, "\(path) has an empty tandem_metadata table; the store is damaged")
                }
                return stored
            }
        }
    }

    static func readMetadata(_ db: Database) throws -> Stored? {
        guard try db.tableExists("tandem_metadata") else { return nil }
        let rows = try Row.fetchAll(db, sql: "SELECT key, value FROM tandem_metadata")
        var values: [String: String] = [:]
        for row in rows { values[row["key"]] = row["value"] }
        if values.isEmpty { return nil }
        guard let version = values["formatVersion"].flatMap(Int.init) else {
            throw StoreError(.corruptFile, "the store's tandem_metadata has no valid formatVersion")
        }
        guard version == formatVersion else {
            throw StoreError(
                .corruptFile,
                "the store has store format \(version); this Tandem reads format \(formatVersion) only (no upgrades before the first release). Sync its changes with the Tandem that made it, then make a new store and sync it"
            )
        }
        guard let dataset = values["dataset"] else { throw StoreError(.corruptFile, "the store's tandem_metadata has no dataset") }
        let schema: Schema
        if let json = values["schema"] {
            do { schema = try Schema(canonicalJSON: Data(json.utf8)) } catch {
                throw StoreError(.corruptFile, "the store's schema JSON is unreadable: \(error)", underlying: error)
            }
        } else {
            schema = Schema(entities: [])
        }
        return Stored(schema: schema, dataset: dataset)
    }

    /// Moves the store's latest HLC stamp (`hlc`) up to `stamp`; never back. With `received`
    /// (a stamp from elsewhere: a sync's pulled changes), `received` too, which keeps the
    /// newest stamp received apart: `hlc` may run ahead with a clock that is wrong, and a
    /// repair of that clock must still stamp after everything received.
    static func advanceClock(past stamp: HLCTimestamp, received: Bool = false, _ db: Database) throws {
        try db.cachedStatement(sql: received ? advanceReceivedSQL : advanceSQL).execute(arguments: [stamp.description])
    }

    private static let advanceSQL = """
        INSERT INTO tandem_metadata (key, value) VALUES ('hlc', ?1)
        ON CONFLICT(key) DO UPDATE SET value = max(value, excluded.value)
        """
    private static let advanceReceivedSQL = """
        INSERT INTO tandem_metadata (key, value) VALUES ('hlc', ?1), ('received', ?1)
        ON CONFLICT(key) DO UPDATE SET value = max(value, excluded.value)
        """

    static func setMetadata(_ key: String, _ value: String, _ db: Database) throws {
        try db.execute(
            sql: "INSERT INTO tandem_metadata (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            arguments: [key, value])
    }
}

/// The change journal's operations on a database: journaled writes, reading and trimming
/// history, and the reader registry. ``ModelContainer`` and ``ModelContext`` wrap these.
enum Journal {
    /// Who is writing: recorded on the history transaction.
    struct Origin: Sendable {
        var author: String?
        var context: String?
    }

    /// The process that writes, recorded on every history transaction.
    static let process: String = {
        let info = ProcessInfo.processInfo
        return "\(info.processName)[\(info.processIdentifier)]"
    }()

    /// Runs `body` in an immediate write transaction whose changes the triggers journal; the
    /// history transaction row is added before commit when anything changed.
    ///
    /// With `marker`, the triggers journal nothing and the history transaction is added
    /// whatever `body` did, with no changes: one marker for a wholesale write (a sync
    /// bootstrap's page), `origin.context` saying what it was.
    static func write<T>(
        _ writer: any DatabaseWriter, journal: JournalContext, origin: Origin, marker: Bool = false,
        body: (Database) throws -> T
    ) throws -> T {
        try writer.writeWithoutTransaction { db in
            var result: T?
            try db.inTransaction(.immediate) {
                let before = try Int64.fetchOne(db.cachedStatement(sql: "SELECT max(id) FROM tandem_history_change")) ?? 0
                let token = try nextToken(db)
                let stamp = try tick(db, journal: journal)
                journal.state.begin(token: token, stamp: stamp, suppressed: marker)
                defer { journal.state.end() }
                result = try body(db)
                let after = marker ? before : try Int64.fetchOne(db.cachedStatement(sql: "SELECT max(id) FROM tandem_history_change")) ?? 0
                if after > before || marker {
                    try db.cachedStatement(
                        sql: """
                            INSERT INTO tandem_history_transaction (token, author, timestamp, stamp, context, process, first_change, last_change)
                            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                            """
                    ).execute(arguments: [
                        token, origin.author, journal.clock.now().timeIntervalSince1970, stamp.description,
                        origin.context, process, before + 1, after,
                    ])
                    // Never moves back: a sync may have advanced it past this stamp (remote stamps).
                    try StoreFile.advanceClock(past: stamp, db)
                }
                return .commit
            }
            return result!
        }
    }

    /// The next token: above every token ever issued, deleted ones included (AUTOINCREMENT
    /// keeps the largest in `sqlite_sequence`).
    static func nextToken(_ db: Database) throws -> Int64 {
        try (Int64.fetchOne(db.cachedStatement(sql: "SELECT seq FROM sqlite_sequence WHERE name = 'tandem_history_transaction'")) ?? 0) + 1
    }

    static func latestToken(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT max(token) FROM tandem_history_transaction")) ?? 0
    }

    /// A new HLC stamp for this write, after the last one persisted by any process.
    ///
    /// The physical part is the sync server's time as the store last learned it (see
    /// ``ServerClockReading``), else the wall clock: a machine whose clock is wrong stamps
    /// as the server would.
    static func tick(_ db: Database, journal: JournalContext) throws -> HLCTimestamp {
        var last: HLCTimestamp?
        var server: ServerClockReading?
        let rows = try Row.fetchCursor(db.cachedStatement(sql: "SELECT key, value FROM tandem_metadata WHERE key IN ('hlc', 'serverClock')"))
        while let row = try rows.next() {
            let value: String = row[1]
            if row[0] as String == "hlc" { last = HLCTimestamp(value) } else { server = ServerClockReading(text: value) }
        }
        var clock = HybridLogicalClock(node: journal.node, last: last)
        return clock.tick(now: UInt64(max(0, now(journal.clock, server: server))))
    }

    /// The time stamps are made with (ms): the wall clock, unless it is more than
    /// ``serverClockThreshold`` plus the reading's uncertainty from the server's time
    /// estimated from `server`; then that. Within it, the wall clock orders edits more finely
    /// than an estimate, whose error is up to the uncertainty (half the answer's latency).
    static func now(_ clock: WallClock, server: ServerClockReading?) -> Int64 {
        let wall = clock.milliseconds
        guard let server else { return wall }
        let estimate = server.estimate(wall: wall, boot: clock.monotonic?())
        return abs(estimate - wall) > serverClockThreshold + server.uncertainty ? estimate : wall
    }

    /// How far (ms) the wall clock may be from the server's before stamps use the server's.
    static let serverClockThreshold: Int64 = 1_000

    // MARK: Reading

    static let transactionColumns = "token, author, timestamp, stamp, context, process, first_change, last_change"

    /// History transactions after the descriptor's token, with their changes.
    static func fetch(_ db: Database, dataset: String, descriptor: HistoryDescriptor) throws -> [HistoryTransaction] {
        var sql = "SELECT \(transactionColumns) FROM tandem_history_transaction WHERE token > ?"
        var arguments: StatementArguments = [descriptor.after?.rawValue ?? 0]
        if let authors = descriptor.authors {
            sql += " AND author IN (\(authors.map { _ in "?" }.joined(separator: ", ")))"
            arguments += StatementArguments(authors.sorted())
        }
        if let excluded = descriptor.excludedAuthors, !excluded.isEmpty {
            sql += " AND (author IS NULL OR author NOT IN (\(excluded.map { _ in "?" }.joined(separator: ", "))))"
            arguments += StatementArguments(excluded.sorted())
        }
        sql += " ORDER BY token"
        if let limit = descriptor.fetchLimit { sql += " LIMIT \(max(0, limit))" }
        // A cursor, not an array: with a change limit, reading stops at the limit.
        let rows = try Row.fetchCursor(db, sql: sql, arguments: arguments)
        var result: [HistoryTransaction] = []
        var remaining = descriptor.changeLimit.map { max(0, $0) } ?? Int.max
        while remaining > 0, let row = try rows.next() {
            var transaction = transaction(from: row)
            var first: Int64 = row["first_change"], last: Int64 = row["last_change"]
            // A marker (a write journaled as a whole, ModelContainer.writeUnjournaled) has
            // no changes: it is returned with none, unless the read resumes within changes.
            let isMarker = first > last
            if isMarker {
                // Whatever the entity filter (a marker may concern any entity), unless the
                // read resumes past it.
                if descriptor.afterChange.map({ $0 < first }) ?? true { result.append(transaction) }
                continue
            }
            if let after = descriptor.afterChange { first = max(first, after + 1) }
            if first > last { continue }
            if remaining < Int.max { last = min(last, first + Int64(remaining) - 1) }
            transaction.changes = try changes(db, dataset: dataset, from: first, through: last, stamp: transaction.stamp, entities: descriptor.entityNames)
            // Counted whether or not the entity filter kept them: a slice cut at the limit
            // ends the read even when none of its changes matched, so a caller resuming
            // after the last change returned never skips the rest of that transaction.
            if descriptor.changeLimit != nil { remaining -= Int(last - first + 1) }
            if (descriptor.entityNames != nil || descriptor.afterChange != nil) && transaction.changes.isEmpty { continue }
            result.append(transaction)
        }
        return result
    }

    static func transaction(from row: Row) -> HistoryTransaction {
        let stampText: String = row["stamp"]
        return HistoryTransaction(
            token: HistoryToken(rawValue: row["token"]), author: row["author"],
            timestamp: Date(timeIntervalSince1970: row["timestamp"]),
            stamp: HLCTimestamp(stampText) ?? .zero, contextName: row["context"],
            processName: row["process"], changes: [])
    }

    /// Changes with ids in `first...last` (one transaction's, stamped `stamp` by default).
    static func changes(
        _ db: Database, dataset: String, from first: Int64, through last: Int64,
        stamp: HLCTimestamp, entities: Set<String>?
    ) throws -> [HistoryChange] {
        let statement = try db.cachedStatement(
            sql: """
                SELECT id, kind, entity, record, "values", stamps FROM tandem_history_change WHERE id BETWEEN ? AND ? ORDER BY id
                """)
        var result: [HistoryChange] = []
        result.reserveCapacity(Int(last - first + 1))
        let cursor = try Row.fetchCursor(statement, arguments: [first, last])
        while let row = try cursor.next() {
            let id: Int64 = row[0]
            let entity: String = row[2]
            if let entities, !entities.contains(entity) { continue }
            let kindText: String = row[1], record: String = row[3]
            guard let kind = HistoryChange.Kind(rawValue: kindText), let uuid = UUIDText.parse(record),
                let blob = row[4] as Data?, let values = JournalValueCoding.decode(blob)
            else {
                throw StoreError(.corruptFile, "history change \(id) is unreadable (kind '\(kindText)', record '\(record)')")
            }
            var stamps: [String: HLCTimestamp] = [:]
            stamps.reserveCapacity(values.count)
            if let json = row[5] as String? {
                guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: String] else {
                    throw StoreError(.corruptFile, "history change \(id) has unreadable stamps")
                }
                let fallback = object["*"].flatMap { HLCTimestamp($0) }
                for column in values.keys {
                    stamps[column] = object[column].flatMap { HLCTimestamp($0) } ?? fallback
                }
            } else {
                for column in values.keys { stamps[column] = stamp }
            }
            result.append(
                HistoryChange(
                    id: id, kind: kind, entityName: entity,
                    persistentModelID: PersistentIdentifier(dataset: dataset, entityName: entity, uuid: uuid),
                    values: values, stamps: stamps, defaultStamp: stamp))
        }
        return result
    }

    // MARK: Retention

    /// Deletes transactions before `token` that every registered reader has acknowledged.
    /// Returns the number of transactions deleted.
    static func deleteHistory(_ db: Database, before token: HistoryToken) throws -> Int {
        let acknowledged = try Int64.fetchOne(db, sql: "SELECT min(acknowledged) FROM tandem_history_reader")
        let through = min(token.rawValue - 1, acknowledged ?? .max)
        guard let lastChange = try Int64.fetchOne(db, sql: "SELECT max(last_change) FROM tandem_history_transaction WHERE token <= ?", arguments: [through]) else {
            return 0
        }
        try db.execute(sql: "DELETE FROM tandem_history_transaction WHERE token <= ?", arguments: [through])
        let deleted = db.changesCount
        try db.execute(sql: "DELETE FROM tandem_history_change WHERE id <= ?", arguments: [lastChange])
        return deleted
    }

    static func registerReader(_ db: Database, name: String, from token: HistoryToken?) throws {
        guard !name.isEmpty else { throw StoreError(.misuse, "a history reader needs a non-empty name") }
        try db.execute(
            sql: "INSERT INTO tandem_history_reader (name, acknowledged) VALUES (?, ?) ON CONFLICT(name) DO NOTHING",
            arguments: [name, token?.rawValue ?? 0])
    }

    static func acknowledge(_ db: Database, reader name: String, through token: HistoryToken) throws {
        try db.execute(sql: "UPDATE tandem_history_reader SET acknowledged = max(acknowledged, ?) WHERE name = ?", arguments: [token.rawValue, name])
        if db.changesCount == 0 {
            throw StoreError(.misuse, "no history reader named '\(name)' is registered; call registerHistoryReader(\"\(name)\") first")
        }
    }

    static func readers(_ db: Database) throws -> [HistoryReader] {
        try Row.fetchAll(db, sql: "SELECT name, acknowledged FROM tandem_history_reader ORDER BY name").map {
            HistoryReader(name: $0["name"], acknowledged: HistoryToken(rawValue: $0["acknowledged"]))
        }
    }
}

import Tandem

/// Issue 4's figures beyond the insert test (which always runs with the journal on): the
/// journal's cost on a 100 k-object update, and reading history after a token in a large
/// store against a small one (cost must follow the entries read, not the store size).
struct JournalBenchmark {
    let rows: Int
    let runs: Int
    let scratch: Scratch

    func run(into report: inout Report) throws {
        try updateTest(into: &report)
        try historyReadTest(into: &report)
    }

    /// Runs `a` then `b` back to back, one warm-up round and `runs` measured rounds.
    private func measurePair(
        _ aName: String, _ a: () throws -> Duration,
        _ bName: String, _ b: () throws -> Duration
    ) throws -> (Measurement, Measurement) {
        var first = Measurement(aName), second = Measurement(bName)
        for round in 0...runs {
            let aTime = try a(), bTime = try b()
            if round > 0 {
                first.samples.append(aTime)
                second.samples.append(bTime)
            }
        }
        return (first, second)
    }

    // MARK: Update one attribute on every object, journal on vs off

    private func updateTest(into report: inout Report) throws {
        let seeds = TodoSeed.make(rows: rows)
        let onPath = scratch.freshPath("journal-on")
        let offPath = scratch.freshPath("journal-off")
        defer { scratch.remove(onPath); scratch.remove(offPath) }
        do {
            let container = try TandemCompetitor.open(onPath)
            _ = try TandemCompetitor.insert(seeds, into: container)
        }
        try RawCompetitor.checkpoint(onPath)
        try FileManager.default.copyItem(atPath: onPath, toPath: offPath)
        // Journal off: the same file without the journal's triggers.
        let queue = try DatabaseQueue(path: offPath)
        try queue.write { db in
            for name in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'trigger'") {
                try db.execute(sql: "DROP TRIGGER \"\(name)\"")
            }
        }
        try queue.close()
        let on = try TandemCompetitor.open(onPath)
        let off = try TandemCompetitor.open(offPath)
        let (journaled, plain) = try measurePair(
            "update, journal on", { try Self.updateScores(on) },
            "update, journal off", { try Self.updateScores(off) })
        let entries = try on.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM tandem_history_change WHERE kind = 'update'") ?? 0 }
        guard entries == rows * (runs + 1) else { throw BenchError("journal: \(entries) update entries, expected \(rows * (runs + 1))") }
        let offEntries = try off.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM tandem_history_change WHERE kind = 'update'") ?? 0 }
        guard offEntries == 0 else { throw BenchError("journal off still journaled \(offEntries) updates") }
        let operation = "update one attribute on \(rows) objects, one save: journal's cost"
        report.comparisons.append(Comparison(operation: operation, tandem: journaled, competitor: plain, target: .none))
        report.measurements += [journaled, plain].map { $0.labelled("journal update") }
    }

    /// Changes `score` on every object; times the `save()` only.
    private static func updateScores(_ container: ModelContainer) throws -> Duration {
        let context = ModelContext(container)
        let todos = try context.fetch(FetchDescriptor<BenchTodo>())
        for todo in todos { todo.score += 1 }
        return try Stopwatch.time { try context.save() }.0
    }

    // MARK: Reading history after a token: large store vs small store

    static let entriesPerTransaction = 1_000
    static let entriesRead = 5_000

    private func historyReadTest(into report: inout Report) throws {
        let large = max(rows * 10, 100_000), small = max(rows / 10, 10_000)
        let largePath = scratch.freshPath("history-large")
        let smallPath = scratch.freshPath("history-small")
        defer { scratch.remove(largePath); scratch.remove(smallPath) }
        let largeStore = try TandemCompetitor.open(largePath)
        let smallStore = try TandemCompetitor.open(smallPath)
        try Self.fill(largeStore, entries: large)
        try Self.fill(smallStore, entries: small)
        let (largeRead, smallRead) = try measurePair(
            "read \(Self.entriesRead) entries, \(large) in store", { try Self.readLatest(largeStore) },
            "read \(Self.entriesRead) entries, \(small) in store", { try Self.readLatest(smallStore) })
        let operation = "history after a token, \(large) vs \(small) entries in store"
        report.comparisons.append(Comparison(operation: operation, tandem: largeRead, competitor: smallRead, target: .ratioAtMost(1.5)))
        report.measurements += [largeRead, smallRead].map { $0.labelled("history read") }
    }

    /// Adds `entries` journaled inserts, `entriesPerTransaction` per raw write.
    private static func fill(_ container: ModelContainer, entries: Int) throws {
        for _ in 0..<(entries / entriesPerTransaction) {
            try container.write(author: "bench") { db in
                try db.execute(
                    sql: """
                        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(entriesPerTransaction)),
                             h(i, x) AS (SELECT i, lower(hex(randomblob(16))) FROM n)
                        INSERT INTO "BenchTodo" ("#id", code, title, "people.name", "people.age", priority, weight, done, count, score, timestamp, note)
                        SELECT substr(x, 1, 8) || '-' || substr(x, 9, 4) || '-' || substr(x, 13, 4) || '-' || substr(x, 17, 4) || '-' || substr(x, 21),
                               'C-' || x, 'title ' || i, 'name', i % 90, i % 3, NULL, 0, i % 100, i * 0.5, 1700000000.0 + i, 'note'
                        FROM h
                        """)
            }
        }
    }

    /// Reads the last `entriesRead` entries after their token, in a fresh context.
    private static func readLatest(_ container: ModelContainer) throws -> Duration {
        let current = try container.currentHistoryToken()
        let after = HistoryToken(rawValue: current.rawValue - Int64(entriesRead / entriesPerTransaction))
        let (elapsed, transactions) = try Stopwatch.time {
            try ModelContext(container).fetchHistory(HistoryDescriptor(after: after))
        }
        let read = transactions.reduce(0) { $0 + $1.changes.count }
        guard read == entriesRead else { throw BenchError("history read \(read) entries, expected \(entriesRead)") }
        return elapsed
    }
}

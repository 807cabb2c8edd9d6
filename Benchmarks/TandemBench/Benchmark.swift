import Tandem

/// Runs the three tests of Issue §9 — Tandem, GRDB and raw C side by side in one process,
/// on the same rows — and collects the comparisons.
///
/// Every test runs one warm-up round (discarded), then `runs` rounds; within a round the
/// competitors run one after the other, so slow drift of a shared machine hits them alike.
final class Benchmark {
    let options: Options
    let scratch: Scratch
    let seeds: [TodoSeed]
    let expectedChecksum: Int
    var report: Report

    init(options: Options) throws {
        self.options = options
        scratch = try Scratch()
        seeds = TodoSeed.make(rows: options.rows)
        expectedChecksum = Checksum.of(seeds)
        report = Report(options: options)
    }

    func run() throws -> Report {
        try checkLayout()
        // Read tests first: the insert test leaves the kernel writing back hundreds of MB.
        try fetchTests()
        if options.includes("articles") {
            try ArticleBenchmark(rows: options.rows, runs: options.runs, scratch: scratch).run(into: &report)
        }
        if options.includes("graph") {
            try GraphBenchmark(collections: max(100, options.rows / 10), runs: options.runs, scratch: scratch).run(into: &report)
        }
        if options.includes("journal") {
            try JournalBenchmark(rows: options.rows, runs: options.runs, scratch: scratch).run(into: &report)
        }
        if options.includes("schema") {
            try SchemaBenchmark(runs: options.runs, scratch: scratch).run(into: &report)
        }
        let reads = report
        report.comparisons = []
        report.measurements = []
        report.notes = []
        try insertTest()
        // Reported in the order of the issue: insert, fetch, group-by.
        report.comparisons += reads.comparisons
        report.measurements += reads.measurements
        report.notes += reads.notes
        return report
    }

    /// Tandem's table must be exactly the one GRDB and raw C create.
    private func checkLayout() throws {
        let path = scratch.freshPath("layout")
        defer { scratch.remove(path) }
        try BenchSchema.verify(tandemDDL: TandemCompetitor.ddl(try TandemCompetitor.open(path)))
    }

    /// Flushes dirty pages, so that no competitor is timed while the kernel writes back
    /// another one's files.
    private func settle() {
        sync()
    }

    private func rounds(_ body: (_ measured: Bool) throws -> Void) throws {
        try body(false)
        for _ in 0..<options.runs { try body(true) }
    }

    private func expect(_ count: Int, _ what: String) throws {
        guard count == options.rows else { throw BenchError("\(what): \(count) rows, expected \(options.rows)") }
    }

    private func expectChecksum(_ checksum: Int, _ what: String) throws {
        guard checksum == expectedChecksum else { throw BenchError("\(what) read back different values (checksum \(checksum) ≠ \(expectedChecksum))") }
    }

    // MARK: 1. Insert

    private func insertTest() throws {
        guard options.includes("insert") else { return }
        var tandem = Measurement("Tandem, journal on")
        var grdb = Measurement("GRDB Encodable insert")
        var grdbSameCache = Measurement("GRDB Encodable, Tandem's writer cache")
        var raw = Measurement("raw C bind/step")
        try rounds { measured in
            do {
                let path = scratch.freshPath("tandem-insert")
                defer { scratch.remove(path) }
                let container = try TandemCompetitor.open(path)
                settle()
                let elapsed = try TandemCompetitor.insert(seeds, into: container)
                try expect(try TandemCompetitor.count(container), "Tandem insert")
                if measured { tandem.samples.append(elapsed) }
            }
            // GRDB with SQLite's default page cache, then with the cache Tandem's writer has.
            for cacheSize in [nil, ModelConfiguration(isStoredInMemoryOnly: true).writerCacheSize] {
                let path = scratch.freshPath("grdb-insert")
                defer { scratch.remove(path) }
                let pool = try GRDBCompetitor.open(path, createTable: true, cacheSize: cacheSize)
                settle()
                let elapsed = try GRDBCompetitor.insert(seeds, into: pool)
                try expect(try GRDBCompetitor.count(pool), "GRDB insert")
                try pool.close()
                if measured {
                    if cacheSize == nil { grdb.samples.append(elapsed) } else { grdbSameCache.samples.append(elapsed) }
                }
            }
            do {
                let path = scratch.freshPath("raw-insert")
                defer { scratch.remove(path) }
                let db = try RawCompetitor.open(path, createTable: true)
                settle()
                let elapsed = try RawCompetitor.insert(seeds, into: db)
                try expect(try db.count(), "raw C insert")
                if measured { raw.samples.append(elapsed) }
            }
        }
        let operation = "insert \(options.rows), one save / transaction"
        report.comparisons.append(Comparison(operation: operation, tandem: tandem, competitor: grdb, target: .ratioAtMost(1.0)))
        report.comparisons.append(Comparison(operation: operation, tandem: tandem, competitor: grdbSameCache, target: .ratioAtMost(1.0)))
        report.comparisons.append(Comparison(operation: operation, tandem: tandem, competitor: raw, target: .ratioAtMost(4.0)))
        report.measurements += [tandem, grdb, grdbSameCache, raw].map { $0.labelled("insert") }
    }

    // MARK: 2. Fetch and 3. group-by count

    /// One populated store per competitor, holding the very same rows (ids included),
    /// checkpointed so that none of them reads from its WAL.
    private struct Stores {
        var container: ModelContainer
        var pool: DatabasePool
        var raw: RawDatabase
    }

    private func withStores(_ body: (Stores) throws -> Void) throws {
        let tandemPath = scratch.freshPath("tandem-fetch")
        let grdbPath = scratch.freshPath("grdb-fetch")
        let rawPath = scratch.freshPath("raw-fetch")
        defer { for path in [tandemPath, grdbPath, rawPath] { scratch.remove(path) } }
        let container = try TandemCompetitor.open(tandemPath)
        _ = try TandemCompetitor.insert(seeds, into: container)
        try RawCompetitor.checkpoint(tandemPath)
        try RawCompetitor.makeCopy(of: tandemPath, at: grdbPath)
        try RawCompetitor.makeCopy(of: tandemPath, at: rawPath)
        let pool = try GRDBCompetitor.open(grdbPath, createTable: false)
        defer { try? pool.close() }
        settle()
        try body(Stores(container: container, pool: pool, raw: try RawCompetitor.open(rawPath, createTable: false)))
    }

    private func fetchTests() throws {
        guard options.includes("fetch") || options.includes("groupby") else { return }
        try withStores { stores in
            if options.includes("fetch") { try fetchTest(stores) }
            if options.includes("groupby") { try groupByTest(stores) }
        }
    }

    private func fetchTest(_ stores: Stores) throws {
        var tandem = Measurement("Tandem")
        var grdb = Measurement("GRDB fetchAll, init(row:)")
        var raw = Measurement("raw C step loop")
        try rounds { measured in
            let (tandemTime, todos) = try TandemCompetitor.fetch(stores.container)
            try expect(todos.count, "Tandem fetch")
            try expectChecksum(Checksum.of(todos), "Tandem fetch")
            let (grdbTime, records) = try GRDBCompetitor.fetch(stores.pool)
            try expect(records.count, "GRDB fetch")
            try expectChecksum(Checksum.of(records), "GRDB fetch")
            let (rawTime, structs) = try RawCompetitor.fetch(stores.raw)
            try expect(structs.count, "raw C fetch")
            try expectChecksum(Checksum.of(structs), "raw C fetch")
            if measured {
                tandem.samples.append(tandemTime)
                grdb.samples.append(grdbTime)
                raw.samples.append(rawTime)
            }
        }
        let operation = "fetch \(options.rows), #Predicate, fresh context"
        report.comparisons.append(Comparison(operation: operation, tandem: tandem, competitor: grdb, target: .ratioAtMost(1.5)))
        report.comparisons.append(Comparison(operation: operation, tandem: tandem, competitor: raw, target: .ratioAtMost(5.0)))
        report.measurements += [tandem, grdb, raw].map { $0.labelled("fetch") }
    }

    private func groupByTest(_ stores: Stores) throws {
        var sql = Measurement("fetchCount(groupedBy:)")
        var memory = Measurement("Tandem fetch + Dictionary")
        var raw = Measurement("raw C GROUP BY")
        let expected = Dictionary(grouping: seeds, by: \.count).mapValues(\.count)
        try rounds { measured in
            let (sqlTime, sqlCounts) = try TandemCompetitor.groupCountSQL(stores.container)
            let (memoryTime, memoryCounts) = try TandemCompetitor.groupCountInMemory(stores.container)
            let (rawTime, rawCounts) = try RawCompetitor.groupCount(stores.raw)
            guard sqlCounts == expected, memoryCounts == expected, rawCounts == expected else {
                throw BenchError("group-by counts differ from the seeds")
            }
            if measured {
                sql.samples.append(sqlTime)
                memory.samples.append(memoryTime)
                raw.samples.append(rawTime)
            }
        }
        let operation = "count grouped by \\.count (\(expected.count) keys)"
        report.comparisons.append(Comparison(operation: operation, tandem: sql, competitor: memory, target: .speedupAtLeast(20)))
        report.comparisons.append(Comparison(operation: operation, tandem: sql, competitor: raw, target: .none))
        report.measurements += [sql, memory, raw].map { $0.labelled("group-by") }
    }
}

import Tandem

/// GRDB: a `DatabasePool` (WAL, like Tandem's) with `synchronous = NORMAL`.
enum GRDBCompetitor {
    /// Opens the pool; `cacheSize` (bytes) gives its writer the page cache Tandem's writer
    /// has (`ModelConfiguration.writerCacheSize`), `nil` keeps SQLite's default.
    static func open(_ path: String, createTable: Bool, cacheSize: Int? = nil) throws -> DatabasePool {
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            if let cacheSize, !db.configuration.readonly { try db.execute(sql: "PRAGMA cache_size = \(-cacheSize / 1024)") }
        }
        let pool = try DatabasePool(path: path, configuration: configuration)
        if createTable { try pool.write { db in try db.execute(sql: BenchSchema.createTableAndIndex) } }
        return pool
    }

    /// Test 1: `record.insert(db)` with the synthesized `Encodable` conformance, one `write`.
    static func insert(_ seeds: [TodoSeed], into pool: DatabasePool) throws -> Duration {
        try Stopwatch.time {
            try pool.write { db in
                for seed in seeds { try GRDBTodo(id: UUID(), seed).insert(db) }
            }
        }.0
    }

    /// Test 2: `fetchAll` with the hand-written positional `init(row:)`.
    static func fetch(_ pool: DatabasePool) throws -> (Duration, [GRDBTodo]) {
        try Stopwatch.time {
            try pool.read { db in try GRDBTodo.fetchAll(db, sql: BenchSchema.selectAllByAge, arguments: [0]) }
        }
    }

    static func count(_ pool: DatabasePool) throws -> Int {
        try pool.read { db in try Int.fetchOne(db, sql: #"SELECT COUNT(*) FROM "BenchTodo""#) ?? 0 }
    }
}

import GRDBSQLite
import Tandem

/// The SQLite C API by hand: the floor of what any Swift layer can reach.
enum RawCompetitor {
    static func open(_ path: String, createTable: Bool) throws -> RawDatabase {
        let db = try RawDatabase(path: path)
        if createTable { try db.execute(BenchSchema.createTable); try db.execute(BenchSchema.createIndex) }
        return db
    }

    /// Test 1: prepare once; bind, step, reset per row; inside BEGIN/COMMIT.
    static func insert(_ seeds: [TodoSeed], into db: RawDatabase) throws -> Duration {
        try Stopwatch.time {
            try db.execute("BEGIN")
            let statement = try db.prepare(BenchSchema.insert)
            defer { sqlite3_finalize(statement) }
            let transient = RawDatabase.transient
            for seed in seeds {
                UUIDHex.withText(UUID()) { _ = sqlite3_bind_text(statement, 1, $0, 36, transient) }
                sqlite3_bind_text(statement, 2, seed.code, -1, transient)
                sqlite3_bind_text(statement, 3, seed.title, -1, transient)
                sqlite3_bind_text(statement, 4, seed.peopleName, -1, transient)
                sqlite3_bind_int64(statement, 5, Int64(seed.peopleAge))
                sqlite3_bind_int64(statement, 6, Int64(seed.priority.rawValue))
                if let weight = seed.weight {
                    sqlite3_bind_double(statement, 7, weight)
                } else {
                    sqlite3_bind_null(statement, 7)
                }
                sqlite3_bind_int64(statement, 8, seed.done ? 1 : 0)
                sqlite3_bind_int64(statement, 9, Int64(seed.count))
                sqlite3_bind_double(statement, 10, seed.score)
                sqlite3_bind_double(statement, 11, seed.timestamp.timeIntervalSince1970)
                sqlite3_bind_text(statement, 12, seed.note, -1, transient)
                guard sqlite3_step(statement) == SQLITE_DONE else { throw db.error("insert") }
                sqlite3_reset(statement)
            }
            try db.execute("COMMIT")
        }.0
    }

    /// Test 2: a step loop building plain structs, parsing the UUID text.
    static func fetch(_ db: RawDatabase) throws -> (Duration, [RawTodo]) {
        try Stopwatch.time {
            let statement = try db.prepare(BenchSchema.selectAllByAge)
            defer { sqlite3_finalize(statement) }
            sqlite3_bind_int64(statement, 1, 0)
            var todos: [RawTodo] = []
            while true {
                let code = sqlite3_step(statement)
                if code == SQLITE_DONE { break }
                guard code == SQLITE_ROW else { throw db.error("fetch") }
                guard let idText = sqlite3_column_text(statement, 0),
                    let id = UUIDHex.parse(idText, count: Int(sqlite3_column_bytes(statement, 0))),
                    let priority = Priority(rawValue: Int(sqlite3_column_int64(statement, 5)))
                else {
                    throw BenchError("malformed row")
                }
                todos.append(
                    RawTodo(
                        id: id,
                        code: text(statement, 1),
                        title: text(statement, 2),
                        people: People(name: text(statement, 3), age: Int(sqlite3_column_int64(statement, 4))),
                        priority: priority,
                        weight: sqlite3_column_type(statement, 6) == SQLITE_NULL ? nil : sqlite3_column_double(statement, 6),
                        done: sqlite3_column_int64(statement, 7) != 0,
                        count: Int(sqlite3_column_int64(statement, 8)),
                        score: sqlite3_column_double(statement, 9),
                        timestamp: Date(timeIntervalSince1970: sqlite3_column_double(statement, 10)),
                        note: text(statement, 11)))
            }
            return todos
        }
    }

    @inline(__always)
    private static func text(_ statement: OpaquePointer, _ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(statement, column) else { return "" }
        return String(decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(statement, column))), as: UTF8.self)
    }

    /// Copies Tandem's rows (ids included) into a fresh file, so the fetch test reads the
    /// very same rows in every competitor; then checkpoints, so no file reads from its WAL.
    static func makeCopy(of tandemPath: String, at path: String) throws {
        let db = try open(path, createTable: true)
        try db.execute("ATTACH DATABASE '\(tandemPath.replacingOccurrences(of: "'", with: "''"))' AS source")
        let columns = BenchSchema.columns.map { "\"\($0)\"" }.joined(separator: ", ")
        try db.execute(#"INSERT INTO main."BenchTodo" SELECT "# + columns + #" FROM source."BenchTodo""#)
        try db.execute("DETACH DATABASE source")
        try db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    /// Moves a file's WAL content into the database file.
    static func checkpoint(_ path: String) throws {
        try RawDatabase(path: path).execute("PRAGMA wal_checkpoint(TRUNCATE)")
    }
}

extension RawCompetitor {
    /// The GROUP BY of test 3 by hand, for context: what SQLite alone costs.
    static func groupCount(_ db: RawDatabase) throws -> (Duration, [Int: Int]) {
        try Stopwatch.time {
            let statement = try db.prepare(#"SELECT "count", COUNT(*) FROM "BenchTodo" GROUP BY "count""#)
            defer { sqlite3_finalize(statement) }
            var counts: [Int: Int] = [:]
            while true {
                let code = sqlite3_step(statement)
                if code == SQLITE_DONE { break }
                guard code == SQLITE_ROW else { throw db.error("group by") }
                counts[Int(sqlite3_column_int64(statement, 0)), default: 0] += Int(sqlite3_column_int64(statement, 1))
            }
            return counts
        }
    }
}

import GRDBSQLite
import Tandem

/// A bare `sqlite3*` connection: the raw C competitor (and the floor of what is possible).
final class RawDatabase {
    let handle: OpaquePointer

    /// Opens (creating) `path` in WAL mode with `synchronous = NORMAL`, like Tandem and GRDB.
    init(path: String) throws {
        var db: OpaquePointer?
        let code = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        guard code == SQLITE_OK, let db else {
            if let db { sqlite3_close_v2(db) }
            throw BenchError("sqlite3_open_v2(\(path)) failed with code \(code)")
        }
        handle = db
        try execute("PRAGMA journal_mode = WAL")
        try execute("PRAGMA synchronous = NORMAL")
    }

    deinit { sqlite3_close_v2(handle) }

    /// `SQLITE_TRANSIENT`: SQLite copies the bound bytes.
    static var transient: sqlite3_destructor_type { unsafeBitCast(-1, to: sqlite3_destructor_type.self) }

    func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        if code != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? "code \(code)"
            sqlite3_free(message)
            throw BenchError("\(sql): \(text)")
        }
    }

    func prepare(_ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else { throw error(sql) }
        return statement
    }

    func error(_ context: String) -> BenchError {
        BenchError("\(context): \(String(cString: sqlite3_errmsg(handle)))")
    }

    func count() throws -> Int {
        let statement = try prepare(#"SELECT COUNT(*) FROM "BenchTodo""#)
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW else { throw error("count") }
        return Int(sqlite3_column_int64(statement, 0))
    }
}

public import Foundation
public import GRDB
internal import GRDBSQLite
public import TandemWire

/// Binding values straight to a cached statement: a pulled change's values in the sync
/// engine, a pushed change's record state and log entry in the server.
///
/// `StatementArguments` boxes every value in an existential and converts it back; a pull of
/// 100 000 inserts spent more time there than in SQLite. These bind with the SQLite C API
/// and run the statement through GRDB (its checks and transaction tracking stay).
///
/// ```swift
/// let statement = try db.cachedStatement(sql: "INSERT INTO Todo (\"#id\", title) VALUES (?, ?)")
/// try statement.executeBound { bind in
///     bind.text(id)
///     bind.value(.text("Milk"))
/// }
/// ```
extension Statement {
    /// Binds parameters 1, 2, … in order.
    public struct Binder {
        let statement: SQLiteStatement
        var index: Int32 = 1
        /// The first binding SQLite refused (a value too big, say): thrown before running.
        var failure: Int32 = SQLITE_OK

        public mutating func int64(_ integer: Int64) {
            next(sqlite3_bind_int64(statement, index, integer))
        }

        /// Bytes as a blob (an empty one stays an empty blob, not NULL).
        public mutating func blob(_ bytes: UnsafeRawBufferPointer) {
            guard let start = bytes.baseAddress, !bytes.isEmpty else { return next(sqlite3_bind_zeroblob(statement, index, 0)) }
            guard bytes.count <= Int32.max else { return next(SQLITE_TOOBIG) }
            next(sqlite3_bind_blob(statement, index, start, Int32(bytes.count), Self.transient))
        }

        public mutating func text(_ text: String) {
            var text = text
            let code = text.withUTF8 { utf8 in
                guard let start = utf8.baseAddress, utf8.count <= Int32.max else {
                    // A NULL pointer would bind NULL; an empty string still binds as text.
                    return utf8.isEmpty ? sqlite3_bind_text(statement, index, "", 0, Self.transient) : SQLITE_TOOBIG
                }
                return sqlite3_bind_text(statement, index, UnsafeRawPointer(start).assumingMemoryBound(to: CChar.self), Int32(utf8.count), Self.transient)
            }
            next(code)
        }

        /// A wire value as SQLite stores it (a boolean as 0 or 1), as ``WireValue/databaseValue``.
        public mutating func value(_ value: WireValue) {
            switch value {
            case .null: next(sqlite3_bind_null(statement, index))
            case .bool(let flag): next(sqlite3_bind_int64(statement, index, flag ? 1 : 0))
            case .integer(let integer): next(sqlite3_bind_int64(statement, index, integer))
            case .real(let real): next(sqlite3_bind_double(statement, index, real))
            case .text(let text): self.text(text)
            case .bytes(let data): data.withUnsafeBytes { blob($0) }
            }
        }

        /// A GRDB value, its text whole (GRDB's own binding stops text at a NUL).
        public mutating func value(_ value: DatabaseValue) {
            switch value.storage {
            case .null: next(sqlite3_bind_null(statement, index))
            case .int64(let integer): next(sqlite3_bind_int64(statement, index, integer))
            case .double(let real): next(sqlite3_bind_double(statement, index, real))
            case .string(let text): self.text(text)
            case .blob(let data): data.withUnsafeBytes { blob($0) }
            }
        }

        private mutating func next(_ code: Int32) {
            if failure == SQLITE_OK && code != SQLITE_OK { failure = code }
            index += 1
        }

        /// Throws the first refused binding, as GRDB would have.
        func check(_ sql: @autoclosure () -> String) throws {
            guard failure != SQLITE_OK else { return }
            throw Statement.error(failure, statement, sql: sql())  // GRDB builds `sql` anew each time
        }

        /// SQLite copies the bytes (they do not outlive the Swift value).
        static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
    }

    /// Runs the statement with its parameters bound by `bind`.
    ///
    /// - Throws: ``DatabaseError`` as `execute(arguments:)` does.
    public func executeBound(_ bind: (inout Binder) -> Void) throws {
        setUncheckedArguments(StatementArguments())
        var binder = Binder(statement: sqliteStatement)
        bind(&binder)
        try binder.check(sql)
        try execute()
    }

    /// The first column of the first row, as text: `.none` when there is no row, `.some(nil)`
    /// when it is NULL.
    ///
    /// It steps the statement itself, without GRDB's per-statement checks (aborted
    /// transaction, cancellation, suspension): it is for a read inside a write transaction
    /// that GRDB runs, whose other statements still make those checks.
    ///
    /// - Throws: ``DatabaseError`` when SQLite fails.
    public func fetchFirstText(_ bind: (inout Binder) -> Void) throws -> String?? {
        try withFirstColumn(bind) { statement in
            guard let text = sqlite3_column_text(statement, 0) else { return nil }
            let count = Int(sqlite3_column_bytes(statement, 0))
            return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
        }
    }

    /// The first column of the first row, as bytes handed to `read` (an empty buffer for
    /// NULL or an empty blob; valid only inside `read`): `nil` when there is no row. Same
    /// conditions as ``fetchFirstText(_:)``.
    ///
    /// ```swift
    /// let state = try statement.withFirstBlob({ $0.int64(dataset); $0.text(uri) }) { try RecordState(stored: $0) }
    /// ```
    ///
    /// - Throws: ``DatabaseError`` when SQLite fails, and what `read` throws.
    public func withFirstBlob<T>(_ bind: (inout Binder) -> Void, _ read: (UnsafeRawBufferPointer) throws -> T) throws -> T? {
        try withFirstColumn(bind) { statement in
            let start = sqlite3_column_blob(statement, 0)  // before its length, as SQLite documents
            let count = Int(sqlite3_column_bytes(statement, 0))
            guard let start, count > 0 else { return try read(UnsafeRawBufferPointer(start: nil, count: 0)) }
            return try read(UnsafeRawBufferPointer(start: start, count: count))
        }
    }

    /// Runs a statement that returns no rows with its parameters bound by `bind`, stepping it
    /// itself, without GRDB's per-statement checks (aborted transaction, cancellation,
    /// suspension) and without telling transaction observers: for the server's writes to its
    /// own tables inside a write transaction that GRDB runs, which no observer watches and
    /// whose other statements still make those checks. About 0.03 s per 100 000 executions
    /// less than ``executeBound(_:)`` (the server's push, release build).
    ///
    /// ```swift
    /// try statement.stepBound { bind in bind.int64(dataset); bind.text(uri) }
    /// ```
    ///
    /// `bind` must bind every parameter: the ones bound before are not cleared. Returns how
    /// many rows the statement changed (`sqlite3_changes`).
    ///
    /// - Throws: ``DatabaseError`` when a binding is refused or SQLite fails (a constraint).
    @discardableResult
    public func stepBound(_ bind: (inout Binder) -> Void) throws -> Int {
        sqlite3_reset(sqliteStatement)  // after a use through GRDB that did not reset it
        var binder = Binder(statement: sqliteStatement)
        bind(&binder)
        try binder.check(sql)
        defer { sqlite3_reset(sqliteStatement) }
        let code = sqlite3_step(sqliteStatement)
        guard code == SQLITE_DONE || code == SQLITE_ROW else { throw Self.error(code, sqliteStatement, sql: sql) }
        return Int(sqlite3_changes(sqlite3_db_handle(sqliteStatement)))
    }

    /// Binds, steps once and reads the first row with `read`; `nil` when there is none.
    private func withFirstColumn<T>(_ bind: (inout Binder) -> Void, _ read: (SQLiteStatement) throws -> T) throws -> T? {
        setUncheckedArguments(StatementArguments())
        var binder = Binder(statement: sqliteStatement)
        bind(&binder)
        try binder.check(sql)
        defer { sqlite3_reset(sqliteStatement) }
        switch sqlite3_step(sqliteStatement) {
        case SQLITE_ROW: return try read(sqliteStatement)
        case SQLITE_DONE: return nil
        case let code: throw Self.error(code, sqliteStatement, sql: sql)
        }
    }

    /// SQLite's result `code` on `statement`, with the connection's message.
    static func error(_ code: Int32, _ statement: SQLiteStatement, sql: String) -> DatabaseError {
        let message = sqlite3_db_handle(statement).map { String(cString: sqlite3_errmsg($0)) }
        return DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: sql)
    }
}

import Foundation
import GRDB
internal import GRDBSQLite
import TandemWire

/// Binding a pulled change's values straight to a cached statement.
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
    struct Binder {
        let statement: SQLiteStatement
        var index: Int32 = 1

        mutating func text(_ text: String) {
            var text = text
            text.withUTF8 { utf8 in
                if let start = utf8.baseAddress {
                    _ = sqlite3_bind_text(statement, index, UnsafeRawPointer(start).assumingMemoryBound(to: CChar.self), Int32(utf8.count), Self.transient)
                } else {
                    _ = sqlite3_bind_text(statement, index, "", 0, Self.transient)   // a NULL pointer would bind NULL
                }
            }
            index += 1
        }

        /// A wire value as SQLite stores it (a boolean as 0 or 1), as ``WireValue/databaseValue``.
        mutating func value(_ value: WireValue) {
            switch value {
            case .null: sqlite3_bind_null(statement, index)
            case .bool(let flag): sqlite3_bind_int64(statement, index, flag ? 1 : 0)
            case .integer(let integer): sqlite3_bind_int64(statement, index, integer)
            case .real(let real): sqlite3_bind_double(statement, index, real)
            case .text(let text): self.text(text); return
            case .bytes(let data):
                data.withUnsafeBytes { bytes in
                    _ = sqlite3_bind_blob(statement, index, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(bytes.count), Self.transient)
                }
            }
            index += 1
        }

        /// SQLite copies the bytes (they do not outlive the Swift value).
        static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
    }

    /// Runs the statement with its parameters bound by `bind`.
    ///
    /// - Throws: ``DatabaseError`` as `execute(arguments:)` does.
    func executeBound(_ bind: (inout Binder) -> Void) throws {
        setUncheckedArguments(StatementArguments())
        var binder = Binder(statement: sqliteStatement)
        bind(&binder)
        try execute()
    }

    /// The first column of the first row, as text: `.none` when there is no row, `.some(nil)`
    /// when it is NULL. For a read inside the write transaction (no observation needed).
    ///
    /// - Throws: ``DatabaseError`` when SQLite fails.
    func fetchFirstText(_ bind: (inout Binder) -> Void) throws -> String?? {
        setUncheckedArguments(StatementArguments())
        var binder = Binder(statement: sqliteStatement)
        bind(&binder)
        defer { sqlite3_reset(sqliteStatement) }
        switch sqlite3_step(sqliteStatement) {
        case SQLITE_ROW:
            guard let text = sqlite3_column_text(sqliteStatement, 0) else { return .some(nil) }
            let count = Int(sqlite3_column_bytes(sqliteStatement, 0))
            return .some(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_DONE:
            return .none
        case let code:
            let message = sqlite3_db_handle(sqliteStatement).map { String(cString: sqlite3_errmsg($0)) }
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: sql)
        }
    }
}

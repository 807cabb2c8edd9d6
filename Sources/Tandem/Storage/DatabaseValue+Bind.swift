internal import GRDBSQLite

extension DatabaseValue {
    /// Binds the value to parameter `index` (1-based) of a prepared statement.
    func sqliteBind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        switch storage {
        case .null: return sqlite3_bind_null(statement, index)
        case .int64(let value): return sqlite3_bind_int64(statement, index, value)
        case .double(let value): return sqlite3_bind_double(statement, index, value)
        case .string(let value): return bindText(value, statement, index)
        case .blob(let value): return bindBlob(value, statement, index)
        }
    }
}

/// A column value recorded in the change journal: exactly what the SQLite column held.
///
/// The journal stores values in a compact binary form (see the store format in
/// `docs/journal.md`); they read back bit for bit, REALs included.
///
/// ```swift
/// if case .text(let title)? = change.values["title"] { print("new title", title) }
/// ```
public enum HistoryValue: Sendable, Hashable, Codable, CustomStringConvertible {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)

    public var description: String {
        switch self {
        case .null: "NULL"
        case .integer(let value): String(value)
        case .real(let value): String(value)
        case .text(let value): String(reflecting: value)
        case .blob(let value): "<\(value.count) bytes>"
        }
    }

    /// The value as a GRDB `DatabaseValue` (for raw SQL replays).
    public var databaseValue: DatabaseValue {
        switch self {
        case .null: .null
        case .integer(let value): value.databaseValue
        case .real(let value): value.databaseValue
        case .text(let value): value.databaseValue
        case .blob(let value): value.databaseValue
        }
    }
}

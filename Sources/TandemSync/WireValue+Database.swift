import Foundation
public import GRDB
public import Tandem
public import TandemWire

extension WireValue {
    /// The wire form of a journaled value.
    public init(_ value: HistoryValue) {
        switch value {
        case .null: self = .null
        case .integer(let integer): self = .integer(integer)
        case .real(let real): self = .real(real)
        case .text(let text): self = .text(text)
        case .blob(let data): self = .bytes(data)
        }
    }

    /// The wire form of a column value as SQLite stores it.
    public init(_ value: DatabaseValue) {
        switch value.storage {
        case .null: self = .null
        case .int64(let integer): self = .integer(integer)
        case .double(let real): self = .real(real)
        case .string(let text): self = .text(text)
        case .blob(let data): self = .bytes(data)
        }
    }

    /// The value to bind in SQL (a boolean as 0 or 1).
    public var databaseValue: DatabaseValue {
        switch self {
        case .null: .null
        case .bool(let flag): (flag ? 1 : 0).databaseValue
        case .integer(let integer): integer.databaseValue
        case .real(let real): real.databaseValue
        case .text(let text): text.databaseValue
        case .bytes(let data): data.databaseValue
        }
    }

    /// The value as wire JSON text (conflict and quarantine tables, `tandem history`):
    /// `"Milk"`, `1`, `null`, `{"bytes": "…"}`.
    public var jsonText: String { WireJSON().appending(self) }
}

extension WireJSON {
    func appending(_ value: WireValue) -> String {
        var copy = self
        copy.append(value)
        return copy.text
    }
}

extension Row {
    /// The wire form of column `index`, its text whole. GRDB reads text up to its first NUL
    /// (U+0000), which the store keeps: text is read again from its bytes when SQLite holds
    /// more of them. Whole only on a cursor's current row (a copied row, from `fetchOne` or
    /// `fetchAll`, holds the text as GRDB read it).
    ///
    /// ```swift
    /// let rows = try Row.fetchCursor(db, sql: "SELECT title FROM Todo")
    /// while let row = try rows.next() { print(row.wireValue(at: 0)) }
    /// ```
    package func wireValue(at index: Int) -> WireValue {
        let value = self[index] as DatabaseValue
        guard case .string(let text) = value.storage else { return WireValue(value) }
        let whole = try? withUnsafeData(atIndex: index) { data -> String? in
            guard let data, data.count != text.utf8.count else { return nil }
            return String(decoding: data, as: UTF8.self)
        }
        return .text((whole ?? nil) ?? text)
    }

    /// The columns of the first row `statement` gives (text whole, see ``wireValue(at:)``);
    /// `nil` when it gives none.
    package static func fetchWireValues(_ statement: Statement, arguments: StatementArguments) throws -> [WireValue]? {
        let rows = try Row.fetchCursor(statement, arguments: arguments)
        guard let row = try rows.next() else { return nil }
        return (0..<row.count).map(row.wireValue(at:))
    }
}

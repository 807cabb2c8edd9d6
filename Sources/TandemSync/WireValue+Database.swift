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

import Tandem

/// A ledger entry: a unique key, a preserved value, and the value kinds the journal encodes.
@Model final class LedgerEntry {
    @Attribute(.unique) var code: String
    @Attribute(.preserveValueOnDeletion) var title: String
    var amount: Double
    var note: String?
    var attachment: Data?

    init(code: String, title: String, amount: Double) {
        self.code = code
        self.title = title
        self.amount = amount
    }
}

/// The model the crash-writer process writes (same declaration as in `JournalCrashWriter`).
@Model final class CrashNote {
    @Attribute(.unique) var code: String
    var body: String
    var count: Int
    var weight: Double
    var tags: [String] = []

    init(code: String, body: String, count: Int, weight: Double) {
        self.code = code
        self.body = body
        self.count = count
        self.weight = weight
    }
}

/// A fixed, steppable wall clock for journal tests.
final class SteppingClock: Sendable {
    private let milliseconds = Locked<Int64>(1_700_000_000_000)

    var clock: WallClock {
        WallClock { [self] in Date(timeIntervalSince1970: Double(milliseconds.withLock { $0 }) / 1000) }
    }

    func set(_ value: Int64) { milliseconds.withLock { $0 = value } }
}

import TandemLocking

extension HistoryValue {
    /// A SQLite value as the journal records it (for comparing rows with replayed history).
    init(_ value: DatabaseValue) {
        switch value.storage {
        case .null: self = .null
        case .int64(let v): self = .integer(v)
        case .double(let v): self = .real(v)
        case .string(let v): self = .text(v)
        case .blob(let v): self = .blob(v)
        }
    }
}

/// Replays history from nothing: the record state the journal describes, by URI, column by
/// column (link rows as `relationship → [member]`).
func replay(_ transactions: [HistoryTransaction]) -> [String: [String: HistoryValue]] {
    var state: [String: [String: HistoryValue]] = [:]
    for transaction in transactions {
        for change in transaction.changes {
            let key = change.persistentModelID.description
            switch change.kind {
            case .insert: state[key] = change.values
            case .update: state[key, default: [:]].merge(change.values) { $1 }
            case .delete: state[key] = nil
            case .link, .unlink: break
            }
        }
    }
    return state
}

/// The rows of an entity table, by URI, with every column except the stamps.
func tableState(_ container: ModelContainer, entity: String) throws -> [String: [String: HistoryValue]] {
    try container.read { db in
        var state: [String: [String: HistoryValue]] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT * FROM \"\(entity)\"") {
            var values: [String: HistoryValue] = [:]
            for (column, value) in row where column != "#id" && column != "#hlc" { values[column] = HistoryValue(value) }
            let id: String = row["#id"]
            state["tandem://\(container.dataset)/\(entity)/\(id)"] = values
        }
        return state
    }
}

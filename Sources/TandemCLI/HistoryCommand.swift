import ArgumentParser
import Foundation
import Tandem
import TandemSync
import TandemWire

/// `tandem history`: the store's change journal, oldest first: who wrote what, value by
/// value, keyed by record URI.
///
/// ```
/// $ tandem history --store todos.store --after 40 --limit 2
/// #41 app 2026-11-22T10:02:11Z
///   insert tandem://todos/Todo/6f1c… title="Milk" rank=1 done=0
/// #42 sync 2026-11-22T10:02:15Z
///   update tandem://todos/Todo/6f1c… done=1
/// ```
struct HistoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "The store's change journal, oldest first (author sync: changes pulled from the server).")
    @OptionGroup var store: StoreOptions
    @Option(help: "Only transactions after this token.") var after: Int64?
    @Option(help: "At most this many transactions.") var limit = 100
    @Option(help: "Only changes of this entity (repeatable).") var entity: [String] = []
    @Option(help: "Only transactions by this author (repeatable), like app or sync.") var author: [String] = []
    @Flag(help: "Print JSON.") var json = false

    struct Printed: Encodable {
        struct Change: Encodable {
            var kind: String
            var record: String
            /// Column → value as wire JSON text (`"Milk"`, `1`, `null`, `{"bytes": "…"}`).
            var values: [String: String]
            var stamps: [String: String]
        }
        var token: Int64
        var author: String?
        var timestamp: Date
        var stamp: String
        var changes: [Change]
    }

    func validate() throws {
        guard limit > 0 else { throw ValidationError("--limit must be at least 1") }
    }

    func run() throws {
        let container = try store.open()
        var descriptor = HistoryDescriptor(after: after.map { HistoryToken(rawValue: $0) })
        descriptor.fetchLimit = limit
        if !entity.isEmpty {
            let unknown = entity.filter { container.schema.entity(named: container.declaredSchema.storedEntityName($0)) == nil }
            guard unknown.isEmpty else {
                throw CLIError("the store has no entity \(unknown.joined(separator: ", ")); it has \(container.declaredSchema.entities.map(\.name).joined(separator: ", "))")
            }
            // The journal names a renamed model by its first name.
            descriptor.entityNames = Set(entity.map(container.declaredSchema.storedEntityName))
        }
        if !author.isEmpty { descriptor.authors = Set(author) }
        let transactions: [HistoryTransaction]
        do { transactions = try container.fetchHistory(descriptor) } catch let error as StoreError {
            throw CLIError(error.message)
        }
        let printed = transactions.map { transaction in
            Printed(
                token: transaction.token.rawValue, author: transaction.author, timestamp: transaction.timestamp,
                stamp: transaction.stamp.description,
                changes: transaction.changes.map { change in
                    Printed.Change(
                        kind: change.kind.rawValue, record: change.persistentModelID.description,
                        values: change.values.mapValues { WireValue($0).jsonText },
                        stamps: change.stamps.mapValues(\.description))
                })
        }
        if json { try printJSON(printed); return }
        if printed.isEmpty { print("no history\(after.map { " after token \($0)" } ?? "")") }
        let dates = ISO8601DateFormatter()
        for transaction in printed {
            print("#\(transaction.token) \(transaction.author ?? "-") \(dates.string(from: transaction.timestamp))")
            for change in transaction.changes {
                let values = change.values.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
                print("  \(change.kind) \(change.record)\(values.isEmpty ? "" : " " + values)")
            }
        }
    }
}

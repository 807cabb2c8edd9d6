import Foundation
import Testing
import Tandem
import TandemSyncTestSupport

/// `tandem history` as a process: the journal as JSON and text, filters, and bad input.
@Suite("tandem history (the process)")
struct HistoryCommandTests {
    static func run(_ arguments: [String]) throws -> ChildProcess {
        try ChildProcess.run(try #require(DaemonProcessTests.tandem, "tandem is not built: run `swift build --build-tests`"), ["history"] + arguments)
    }

    @Test func printsTheJournalValueByValueWithFilters() throws {
        let (url, store) = try DaemonProcessTests.storeFile()
        try SyncFixtures.insert(store, 1, title: "milk", rank: 2)
        try SyncFixtures.update(store, 1, "title", "oat milk")
        try SyncFixtures.insertProject(store, 9, name: "home")
        let path = url.path(percentEncoded: false)

        let all = try Self.run(["--store", path, "--json"])
        #expect(all.status == 0, "\(all.err)")
        let transactions = try #require(try JSONSerialization.jsonObject(with: Data(all.out.utf8)) as? [[String: Any]])
        #expect(transactions.count == 3)
        let changes = transactions.compactMap { ($0["changes"] as? [[String: Any]])?.first }
        #expect(changes.map { $0["kind"] as? String } == ["insert", "update", "insert"])
        #expect((changes[1]["values"] as? [String: String]) == ["title": #""oat milk""#])
        #expect((changes[0]["record"] as? String) == "tandem://todos/Todo/\(SyncFixtures.id(1))")
        #expect(transactions.allSatisfy { $0["author"] as? String == "app" })

        let after = try Self.run(["--store", path, "--after", "\(transactions[0]["token"] as? Int ?? 0)", "--entity", "Todo"])
        #expect(after.status == 0)
        #expect(after.out.contains("update tandem://todos/Todo/\(SyncFixtures.id(1)) title=\"oat milk\""))
        #expect(!after.out.contains("insert"), "the first transaction and the Project one are filtered out: \(after.out)")

        let unknown = try Self.run(["--store", path, "--entity", "Nope"])
        #expect(unknown.status == 2 && unknown.err.contains("no entity Nope"), "\(unknown.err)")
        let missing = try Self.run(["--store", path + ".missing"])
        #expect(missing.status != 0 && !missing.err.isEmpty)
    }
}

import Foundation
import Testing
import GRDB
import Tandem
import TandemSchema
@testable import TandemSync
import TandemSyncTestSupport

/// Unique values and composite leaves as a user meets them: `tandem records put` and
/// `tandem sync` processes on store files, against a real `tandem-server`.
@Suite("Unique values and composite leaves (tandem processes)", .serialized)
struct UniqueValueProcessTests {
    static func storeFile() throws -> (URL, ModelContainer) {
        let url = FileManager.default.temporaryDirectory.appending(path: "tandem-unique-\(UUID().uuidString).store")
        return (url, try ModelContainer(schema: RichSimulationTests.schema, configuration: ModelConfiguration(url: url, dataset: "todos")))
    }

    static func put(_ url: URL, _ entity: String, _ n: Int, _ json: String) throws {
        let run = try ClockProcessTests.tandem(["records", "put", "--store", url.path(percentEncoded: false), "--entity", entity, "--id", SyncFixtures.id(n), json])
        #expect(run.status == 0, "put failed: \(run.errors)")
    }

    static func sync(_ url: URL, _ server: SyncServerProcess) throws {
        let run = try ClockProcessTests.sync(url, server: server)
        #expect(run.status == 0, "the sync failed: \(run.output) \(run.errors)")
    }

    static func projects(_ store: ModelContainer) throws -> [String] {
        try SyncFixtures.projects(store)
    }

    @Test func twoStoresInsertingOneUniqueNameEndWithOneRecordAndTheReferencesFollowIt() async throws {
        let server = try await SyncServerProcess.make()
        let (urlA, a) = try Self.storeFile()
        let (urlB, b) = try Self.storeFile()
        try Self.put(urlA, "Project", 100, #"{"name": "home"}"#)
        try Self.put(urlA, "Todo", 1, #"{"title": "on A", "people.name": "a", "people.age": 1, "project": "\#(SyncFixtures.id(100))"}"#)
        try Self.put(urlB, "Project", 200, #"{"name": "home"}"#)
        try Self.put(urlB, "Todo", 2, #"{"title": "on B", "people.name": "b", "people.age": 2, "project": "\#(SyncFixtures.id(200))"}"#)
        for url in [urlA, urlB, urlA, urlB] { try Self.sync(url, server) }

        for store in [a, b] {
            #expect(try Self.projects(store) == ["\(SyncFixtures.id(100)) home"])
            #expect(try SyncFixtures.dangling(store).isEmpty, "no todo points at the merged-away project")
            #expect(try SyncStatus(of: store).pendingChanges == 0 && SyncStatus(of: store).quarantined == 0)
        }
        #expect(try RichSimulationTests.state(a) == RichSimulationTests.state(b))
        let conflicts = try ClockProcessTests.tandem(["conflicts", "--store", urlB.path(percentEncoded: false)])
        #expect(conflicts.output.contains(SyncFixtures.id(100)), "tandem conflicts names the survivor: \(conflicts.output)")

        // The survivor's delete rule (cascade) reaches the todo that pointed at the loser.
        let delete = try ClockProcessTests.tandem(["records", "delete", "--store", urlA.path(percentEncoded: false), "tandem://todos/Project/\(SyncFixtures.id(100))"])
        #expect(delete.status == 0, "\(delete.errors)")
        for url in [urlA, urlB] { try Self.sync(url, server) }
        let left = try RichSimulationTests.state(b).filter { $0.hasPrefix("todo") || $0.hasPrefix("project") }
        #expect(left.isEmpty, "\(left)")
    }

    @Test func namesSwappedInOneSaveAndUpdatesToOneNameConverge() async throws {
        let server = try await SyncServerProcess.make()
        let (urlA, a) = try Self.storeFile()
        let (urlB, b) = try Self.storeFile()
        try Self.put(urlA, "Project", 100, #"{"name": "p"}"#)
        try Self.put(urlA, "Project", 200, #"{"name": "q"}"#)
        try Self.put(urlA, "Project", 300, #"{"name": "r"}"#)
        try Self.put(urlA, "Todo", 1, #"{"title": "in q", "people.name": "c", "people.age": 3, "project": "\#(SyncFixtures.id(200))"}"#)
        for url in [urlA, urlB] { try Self.sync(url, server) }

        // A swaps p and q in one save while B renames r.
        try a.write(author: "app") { db in
            try db.execute(sql: ##"UPDATE Project SET name = 'tmp' WHERE "#id" = ?"##, arguments: [SyncFixtures.id(100)])
            try db.execute(sql: ##"UPDATE Project SET name = 'p' WHERE "#id" = ?"##, arguments: [SyncFixtures.id(200)])
            try db.execute(sql: ##"UPDATE Project SET name = 'q' WHERE "#id" = ?"##, arguments: [SyncFixtures.id(100)])
        }
        try Self.put(urlB, "Project", 300, #"{"name": "s"}"#)
        for url in [urlA, urlB, urlA, urlB] { try Self.sync(url, server) }

        #expect(try Self.projects(a) == ["\(SyncFixtures.id(100)) q", "\(SyncFixtures.id(200)) p", "\(SyncFixtures.id(300)) s"])
        #expect(try !SyncStatus.conflicts(of: b).contains { $0.rule == "uniqueMerge" }, "a swap is not a merge")
        #expect(try RichSimulationTests.state(a) == RichSimulationTests.state(b))
        #expect(
            try RichSimulationTests.state(b).contains { $0.hasPrefix("todo \(SyncFixtures.id(1))") && $0.hasSuffix("\"\(SyncFixtures.id(200))\"") },
            "the todo stays in its project through the swap")
        for store in [a, b] { #expect(try SyncStatus(of: store).pendingChanges == 0 && SyncStatus(of: store).quarantined == 0) }
    }

    @Test func twoLeavesOfOneCompositeEditedOnTwoStoresBothStay() async throws {
        let server = try await SyncServerProcess.make()
        let (urlA, a) = try Self.storeFile()
        let (urlB, b) = try Self.storeFile()
        try Self.put(urlA, "Todo", 1, #"{"title": "t", "people.name": "Ann", "people.age": 30}"#)
        for url in [urlA, urlB] { try Self.sync(url, server) }
        try Self.put(urlA, "Todo", 1, #"{"people.name": "Bea"}"#)
        try Self.put(urlB, "Todo", 1, #"{"people.age": 41}"#)
        for url in [urlA, urlB, urlA] { try Self.sync(url, server) }
        for store in [a, b] {
            #expect(try RichSimulationTests.value(store, "Todo/\(SyncFixtures.id(1))", "people.name") == #""Bea""#)
            #expect(try RichSimulationTests.value(store, "Todo/\(SyncFixtures.id(1))", "people.age") == "41")
        }
    }
}

extension UniqueValueProcessTests {
    /// A link made on B, pushed before A (which has not seen it) deletes its todo and makes
    /// it again: the delete takes the link on every replica, A included, which pulls the link
    /// only after its own delete and insert.
    @Test func aLinkOlderThanADeleteAndReinsertMadeElsewhereIsGoneOnEveryStore() async throws {
        let server = try await SyncServerProcess.make()
        let (urlA, a) = try Self.storeFile()
        let (urlB, b) = try Self.storeFile()
        let todo = #"{"title": "t", "people.name": "a", "people.age": 1}"#
        try Self.put(urlA, "Tag", 200, #"{"label": "home"}"#)
        try Self.put(urlA, "Todo", 1, todo)
        for url in [urlA, urlB] { try Self.sync(url, server) }
        try Self.put(urlB, "Tag", 200, #"{"todos": ["\#(SyncFixtures.id(1))"]}"#)
        try Self.sync(urlB, server)
        let delete = try ClockProcessTests.tandem(["records", "delete", "--store", urlA.path(percentEncoded: false), "tandem://todos/Todo/\(SyncFixtures.id(1))"])
        #expect(delete.status == 0, "\(delete.errors)")
        try Self.put(urlA, "Todo", 1, todo)
        for url in [urlA, urlB, urlA, urlB] { try Self.sync(url, server) }
        let state = try RichSimulationTests.state(a)
        #expect(try state == RichSimulationTests.state(b))
        #expect(!state.contains { $0.hasPrefix("link") }, "\(state)")
    }
}

extension UniqueValueProcessTests {
    /// An edit newer than a delete made elsewhere is not lost: the server keeps it with the
    /// deleted record, and `tandem conflicts` says so (it said "lost", and a hostile trial
    /// found the value back on every replica once the record was made again).
    @Test func anEditNewerThanADeleteElsewhereIsReportedAsKeptNotLost() async throws {
        let server = try await SyncServerProcess.make()
        let (urlA, _) = try Self.storeFile()
        let (urlB, b) = try Self.storeFile()
        try Self.put(urlA, "Todo", 1, #"{"title": "t", "people.name": "a", "people.age": 1}"#)
        for url in [urlA, urlB] { try Self.sync(url, server) }
        let delete = try ClockProcessTests.tandem(["records", "delete", "--store", urlA.path(percentEncoded: false), "tandem://todos/Todo/\(SyncFixtures.id(1))"])
        #expect(delete.status == 0, "\(delete.errors)")
        try Self.sync(urlA, server)
        try Self.put(urlB, "Todo", 1, #"{"title": "edited on B"}"#)
        try Self.sync(urlB, server)
        let conflicts = try ClockProcessTests.tandem(["conflicts", "--store", urlB.path(percentEncoded: false)])
        #expect(conflicts.output.contains("the value is kept there, not applied"), "\(conflicts.output)")
        #expect(!conflicts.output.contains("this store's value lost"), "\(conflicts.output)")
        #expect(try RichSimulationTests.state(b).filter { $0.hasPrefix("todo") }.isEmpty, "the delete stands")
    }
}

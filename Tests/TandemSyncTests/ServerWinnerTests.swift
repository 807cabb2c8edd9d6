import Foundation
import GRDB
import Testing
import Tandem
import TandemWire
@testable import TandemSync
import TandemSyncTestSupport

/// A pushed value that lost at the server: the server's value is taken into the row when the
/// row still holds the pushed one (no I/O beyond the store).
@Suite("Values the server kept over pushed ones")
struct ServerWinnerTests {
    static func stored(_ store: ModelContainer) throws -> (title: String?, stamp: String?) {
        try store.read { db in
            let row = try Row.fetchOne(db, sql: ##"SELECT title, "#hlc" FROM Todo WHERE "#id" = ?"##, arguments: [SyncFixtures.id(1)])
            return (row?[0], row?[1])
        }
    }

    /// A store whose earlier value was stamped by a clock the server no longer agrees with:
    /// its later edit, re-stamped with the server's time, lost to it. Found by a hostile trial
    /// (the store kept the edit that lost, for good, every sync saying synced).
    @Test func theServersValueReplacesThePushedOneThatLost() throws {
        let store = try SyncFixtures.store()
        try SyncFixtures.insert(store, 1, title: "v2")
        let text = try #require(Self.stored(store).stamp)
        let pushed = try #require(ChangeApplier.stamps(text)?["*"])
        let lost = LostValue(
            attribute: "title", value: .text("v2"), stamp: pushed.description,
            winningValue: .text("v1"), winningStamp: "01a2fffff000-0000-0000000000000007")
        let winner = try #require(ServerWinner(record: "tandem://todos/Todo/\(SyncFixtures.id(1))", entity: "Todo", lost: lost))
        try store.write(author: "sync") { db in try winner.adopt(db) }
        let (title, stamp) = try Self.stored(store)
        #expect(title == "v1")
        #expect(stamp.flatMap(ChangeApplier.stamps)?["title"] == HLCTimestamp("01a2fffff000-0000-0000000000000007"))
    }

    @Test func aLaterLocalEditStandsOverTheServersValue() throws {
        let store = try SyncFixtures.store()
        try SyncFixtures.insert(store, 1, title: "v2")
        let text = try #require(Self.stored(store).stamp)
        let pushed = try #require(ChangeApplier.stamps(text)?["*"])
        try SyncFixtures.update(store, 1, "title", "v3")  // made after the push
        let lost = LostValue(
            attribute: "title", value: .text("v2"), stamp: pushed.description,
            winningValue: .text("v1"), winningStamp: "01a2fffff000-0000-0000000000000007")
        try store.write(author: "sync") { db in try ServerWinner(record: "tandem://todos/Todo/\(SyncFixtures.id(1))", entity: "Todo", lost: lost)?.adopt(db) }
        #expect(try Self.stored(store).title == "v3")
    }

    /// A winning reference to a record merged into another here is taken as the survivor, as
    /// the merge re-pointed references: the server keeps references as they were sent. Before,
    /// the row took the merged-away id and pointed nowhere (hard soak, seed 7823501450754).
    @Test func aWinningReferenceToAMergedRecordIsTakenAsItsSurvivor() throws {
        let store = try SyncFixtures.store(schema: SyncFixtures.uniqueProjectSchema)
        try SyncFixtures.insertProject(store, 100, name: "b")
        try SyncFixtures.insert(store, 1, title: "t")
        try SyncFixtures.move(store, 1, to: 100)
        try store.write(author: "sync") { db in
            try SyncStore.create(db)
            try SyncStore.setMerged(entity: "Project", loser: SyncFixtures.id(102), survivor: SyncFixtures.id(100), stamp: HLCTimestamp(physical: 1, counter: 0, node: 1), db)
        }
        let text = try #require(try store.read { db in try String.fetchOne(db, sql: ##"SELECT "#hlc" FROM Todo WHERE "#id" = ?"##, arguments: [SyncFixtures.id(1)]) })
        let pushed = try #require(ChangeApplier.stamps(text)?["project"])
        let lost = LostValue(
            attribute: "project", value: .text(SyncFixtures.id(100)), stamp: pushed.description,
            winningValue: .text(SyncFixtures.id(102)), winningStamp: "01a2fffff000-0000-0000000000000007")
        let winner = try #require(ServerWinner(record: "tandem://todos/Todo/\(SyncFixtures.id(1))", entity: "Todo", lost: lost, schema: SyncFixtures.uniqueProjectSchema))
        try store.write(author: "sync") { db in try winner.adopt(db) }
        #expect(try SyncFixtures.project(of: 1, store) == SyncFixtures.id(100))
    }

    /// A winning value another record here holds under a unique index is left to the pull and
    /// the server's merges: written, it failed every sync for good (found by the hard soak).
    @Test func aWinnerTakenByAnotherRecordUnderAUniqueIndexIsLeftToThePull() throws {
        let store = try SyncFixtures.store(schema: SyncFixtures.uniqueProjectSchema)
        try SyncFixtures.insertProject(store, 1, name: "A")
        try SyncFixtures.insertProject(store, 2, name: "B")
        let text = try #require(try store.read { db in try String.fetchOne(db, sql: ##"SELECT "#hlc" FROM Project WHERE "#id" = ?"##, arguments: [SyncFixtures.id(1)]) })
        let pushed = try #require(ChangeApplier.stamps(text)?["*"])
        let lost = LostValue(
            attribute: "name", value: .text("A"), stamp: pushed.description,
            winningValue: .text("B"), winningStamp: "01a2fffff000-0000-0000000000000007")
        try store.write(author: "sync") { db in try ServerWinner(record: "tandem://todos/Project/\(SyncFixtures.id(1))", entity: "Project", lost: lost)?.adopt(db) }
        #expect(try SyncFixtures.projects(store) == ["\(SyncFixtures.id(1)) A", "\(SyncFixtures.id(2)) B"])
    }
}

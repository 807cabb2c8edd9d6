import Foundation
import Testing
import Tandem
@testable import TandemSync
import TandemWire
import TandemSyncTestSupport

@Suite("Push planning (journal → changes)")
struct PushPlannerTests {
    func plan(_ edits: (ModelContainer) throws -> Void) throws -> [WireChange] {
        let store = try SyncFixtures.store()
        try edits(store)
        return PushPlanner.plan(try store.fetchHistory(HistoryDescriptor())).changes
    }

    @Test func anInsertKeepsItsStampsAndItsLaterUpdatesAreMergedIntoOneUpdate() throws {
        let changes = try plan { store in
            try SyncFixtures.insert(store, 1, title: "a")
            try SyncFixtures.update(store, 1, "title", "b")
            try SyncFixtures.update(store, 1, "rank", 3)
        }
        #expect(changes.map(\.kind) == [.insert, .update])
        #expect(changes[0].values["title"] == .text("a"))
        #expect(changes[0].stamps.keys.sorted() == ["*"], "one insert, one stamp (the record's creation), sent compact under \"*\"")
        #expect(changes[1].stamps.keys.sorted() == ["*", "title"], "compact: rank takes the default, title is stamped otherwise")
        #expect(changes[1].values == ["title": .text("b"), "rank": .integer(3)])
        #expect(changes[1].stamp(of: "title")! < changes[1].stamp(of: "rank")!, "rank was written after title")
        #expect(changes[0].stamp(of: "title")! < changes[1].stamp(of: "title")!)
        #expect(changes[0].record == "tandem://todos/Todo/\(SyncFixtures.id(1))")
    }

    @Test func recordsChangingUniqueValuesGoFirstWithTheirWholeSegmentAndLinksStayLast() {
        func change(_ n: Int, _ entity: String, _ kind: WireChange.Kind, _ values: [String: WireValue] = [:]) -> WireChange {
            WireChange(record: "tandem://todos/\(entity)/\(SyncFixtures.id(n))", entity: entity, kind: kind, values: values, stamps: [:])
        }
        let changes = [
            change(1, "Todo", .update, ["title": .text("t")]),
            change(2, "Project", .update, ["color": .text("red")]),
            change(3, "Project", .delete), change(3, "Project", .insert, ["name": .text("n")]),
            change(4, "Project", .update, ["name": .text("m")]),
            change(4, "Project", .link, ["tags": .text(SyncFixtures.id(9))]),
        ]
        let ordered = PushPlanner.uniqueValuesFirst(changes, uniqueColumns: ["Project": ["name"]])
        #expect(ordered.map { "\($0.record.suffix(1))\($0.kind.rawValue)" } == ["3delete", "3insert", "4update", "1update", "2update", "4link"])
    }

    @Test func aDeleteReplacesTheEditsBeforeItAndAReinsertIsItsOwnChange() throws {
        let changes = try plan { store in
            try SyncFixtures.insert(store, 1, title: "a")
            try SyncFixtures.update(store, 1, "title", "b")
            try SyncFixtures.delete(store, 1)
            try SyncFixtures.insert(store, 1, title: "again")
            try SyncFixtures.insert(store, 2, title: "other")
        }
        #expect(changes.map(\.kind) == [.delete, .insert, .insert])
        #expect(changes[0].stamps.keys.sorted() == [WireChange.deleteStampKey] && changes[0].values.isEmpty)
        #expect(changes[1].values["title"] == .text("again"))
        #expect(changes[0].stamps["*"]! < changes[1].stamp(of: "title")!)
    }

    @Test func batchesRespectCountAndBytes() {
        let changes = (0..<10).map { WireChange(record: "r\($0)", entity: "Todo", kind: .update, values: ["title": .text(String(repeating: "x", count: 100))], stamps: ["title": "s"]) }
        #expect(PushPlanner.chunks(changes, count: 3, bytes: 1 << 20).map(\.changes.count) == [3, 3, 3, 1])
        #expect(PushPlanner.chunks(changes, count: 100, bytes: 400).allSatisfy { $0.changes.count <= 3 })
        #expect(PushPlanner.chunks(changes, count: 100, bytes: 400).flatMap(\.changes) == changes)
        // Each batch's JSON, written while cutting, is what encoding its changes gives, and
        // its body is the push request's.
        for batch in PushPlanner.chunks(changes, count: 3, bytes: 1 << 20) {
            #expect(batch.json == PushPlanner.Batch(batch.changes).json)
            #expect(batch.body(schemaVersion: 4) == WireJSON.data { $0.append(PushRequest(schemaVersion: 4, changes: batch.changes, outcomes: .lost)) })
            #expect(batch.body(schemaVersion: 4, outcomes: .all) == WireJSON.data { $0.append(PushRequest(schemaVersion: 4, changes: batch.changes)) })
        }
    }

    @Test func aRecordsChangesStayInOneBatch() {
        var changes = (0..<5).map { WireChange(record: "r\($0)", entity: "Todo", kind: .insert, values: ["title": .text("x")], stamps: ["title": "s"]) }
        changes.insert(WireChange(record: "r1", entity: "Todo", kind: .update, values: ["title": .text("y")], stamps: ["title": "t"]), at: 2)
        let chunks = PushPlanner.chunks(changes, count: 2, bytes: 1 << 20).map(\.changes)
        #expect(chunks.map { $0.map(\.record) } == [["r0", "r1", "r1"], ["r2", "r3"], ["r4"]])
        #expect(chunks.allSatisfy { chunk in !chunks.contains { $0 != chunk && !Set($0.map(\.record)).isDisjoint(with: chunk.map(\.record)) } })
    }
}

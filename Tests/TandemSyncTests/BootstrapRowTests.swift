import Foundation
import GRDB
import Testing
import Tandem
import TandemSchema
import TandemWire
@testable import TandemSync
import TandemSyncTestSupport

/// A bootstrap's plain inserts, written straight from the page's rows, leave what the general
/// applier leaves, and go the general way whenever it has something to decide.
@Suite("Bootstrap rows")
struct BootstrapRowTests {
    static let created = "01a216b75f00-0000-00000000000000aa"
    static let later = "01a216b75f2e-0002-00000000000000bb"

    static func insert(_ entity: String, _ n: Int, _ values: [String: WireValue], stamps: [String: String] = [:], position: Int64 = 1) -> LogEntry {
        LogEntry(
            position: position,
            change: WireChange(
                record: "tandem://todos/\(entity)/\(SyncFixtures.id(n))", entity: entity, kind: .insert, values: values,
                stamps: ["*": created].merging(stamps) { _, new in new }),
            schemaVersion: 1)
    }

    static let entries = [
        insert("Project", 1, ["name": .text("home")]),
        insert("Todo", 2, ["title": .text("a \"quoted\" title"), "rank": .integer(3), "project": .text(SyncFixtures.id(1))]),
        insert("Todo", 3, ["title": .text("b"), "rank": .null, "project": .null], stamps: ["rank": later]),
        insert("Todo", 4, ["title": .text("c"), "rank": .integer(1), "project": .text(SyncFixtures.id(99))], stamps: ["*": later, "title": created]),
    ]

    static func page(_ entries: [LogEntry], shapes: [BulkPage.Shape]) throws -> BulkPage {
        let body = WireJSON.data { $0.append(PullResponse(changes: entries, nextCursor: "c1.x", hasMore: false, serverTime: 1)) }
        return try WireJSONReader.bulkPage(body, dataset: "todos", shapes: shapes)
    }

    /// Every row of both tables with every column, `"#hlc"` included.
    static func everything(_ store: ModelContainer) throws -> [String] {
        try store.read { db in
            try ["Project", "Todo"].flatMap { table in
                try Row.fetchAll(db, sql: "SELECT * FROM \(table) ORDER BY \"#id\"").map { "\(table) \($0)" }
            }
        }
    }

    @Test func rowsWriteWhatTheGeneralApplierWrites() throws {
        let bulk = try SyncFixtures.store(), general = try SyncFixtures.store()
        let applier = ChangeApplier(schema: bulk.schema, dataset: "todos", now: 0, pending: [:])
        let page = try Self.page(Self.entries, shapes: applier.rowShapes)
        var rows = 0
        try bulk.write(author: "sync") { db in
            try SyncStore.create(db)
            var outcome = ChangeApplier.Outcome()
            for item in page.items {
                guard case .row(let row) = item else { Issue.record("not read as a row: \(item)"); continue }
                let shape = applier.rowShapes[row.shape]
                let written = try applier.insert(row, shape: shape, rowStamps: ChangeApplier.rowStamps(row, shape), db, into: &outcome)
                #expect(written)
                rows += 1
            }
            #expect(outcome.applied == Self.entries.count)
        }
        try general.write(author: "sync") { db in
            try SyncStore.create(db)
            var outcome = ChangeApplier.Outcome()
            for entry in Self.entries { try applier.apply(entry, db, into: &outcome) }
        }
        #expect(rows == Self.entries.count)
        #expect(try Self.everything(bulk) == Self.everything(general))
        #expect(try Self.everything(bulk).count == 4)
    }

    @Test func aRowGoesTheGeneralWayWhenTheApplierHasSomethingToDecide() throws {
        let store = try SyncFixtures.store(schema: SyncFixtures.uniqueProjectSchema)
        try SyncFixtures.insertProject(store, 7, name: "home")  // holds the unique name
        try SyncFixtures.insert(store, 2, title: "mine")  // the record exists
        var applier = ChangeApplier(schema: store.schema, dataset: "todos", now: 0, pending: [:])
        let shapes = applier.rowShapes
        let entries = [
            Self.insert("Project", 1, ["name": .text("home")]),
            Self.insert("Todo", 2, ["title": .text("theirs"), "rank": .null, "project": .null]),
            Self.insert("Todo", 5, ["title": .text("pending here"), "rank": .null, "project": .null]),
        ]
        let page = try Self.page(entries, shapes: shapes)
        let before = try Self.everything(store)
        applier.pending = ["tandem://todos/Todo/\(SyncFixtures.id(5))": ["*": HLCTimestamp(Self.later)!]]
        try store.write(author: "sync") { db in
            try SyncStore.create(db)
            var outcome = ChangeApplier.Outcome()
            for item in page.items {
                guard case .row(let row) = item else { Issue.record("not read as a row: \(item)"); continue }
                let shape = shapes[row.shape]
                let written = try applier.insert(row, shape: shape, rowStamps: ChangeApplier.rowStamps(row, shape), db, into: &outcome)
                #expect(!written, "\(row.id)")
            }
            #expect(outcome.applied == 0)
        }
        #expect(try Self.everything(store) == before)
        // Once the store merged a record, a record of a unique entity may be redirected.
        applier.pending = [:]
        applier.merges.any = true
        let free = try Self.page([Self.insert("Project", 8, ["name": .text("free")])], shapes: shapes)
        try store.write(author: "sync") { db in
            var outcome = ChangeApplier.Outcome()
            guard case .row(let row) = free.items[0] else { Issue.record("not a row"); return }
            let written = try applier.insert(row, shape: shapes[row.shape], rowStamps: ChangeApplier.rowStamps(row, shapes[row.shape]), db, into: &outcome)
            #expect(!written)
        }
    }

    @Test func rowStampsAreThoseTheInsertGets() throws {
        let applier = ChangeApplier(schema: SyncFixtures.schema, dataset: "todos", now: 0, pending: [:])
        let page = try Self.page(Self.entries, shapes: applier.rowShapes)
        for (item, entry) in zip(page.items, Self.entries) {
            guard case .row(let row) = item else { Issue.record("not a row"); continue }
            let stamps = entry.change.stamps.mapValues { HLCTimestamp($0)! }
            let expected = ChangeApplier.rowStamps(created: stamps["*"]!, columns: entry.change.values.keys, stamps: stamps)
            #expect(ChangeApplier.rowStamps(row, applier.rowShapes[row.shape]) == expected)
        }
    }
}

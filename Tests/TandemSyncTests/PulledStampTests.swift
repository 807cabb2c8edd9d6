import Foundation
import GRDB
import Testing
import Tandem
import TandemWire
@testable import TandemSync
import TandemSyncTestSupport

/// Pulled values applied by the applier keep the stamps they came with (no I/O beyond the store).
@Suite("Pulled stamps kept")
struct PulledStampTests {
    /// Two values under one stamp (a swap in one save, one record merged away meanwhile):
    /// the tie, decided for the pulled one, changes no stamp. The row's stamps, written back
    /// unchanged, let the journal's trigger stamp the row as a fresh local edit, which then
    /// beat every later value, here only (hard soak, seed 13068604670687).
    @Test func aTieDecidedForThePulledValueKeepsItsStamp() throws {
        let store = try SyncFixtures.store(schema: SyncFixtures.uniqueProjectSchema)
        let applier = ChangeApplier(schema: store.schema, dataset: "todos", now: 0, pending: [:])
        applier.merges.ever = true
        let record = "tandem://todos/Project/\(SyncFixtures.id(101))"
        let stamp = "01a216b75f2e-0002-00000000000000aa"
        let changes = [
            WireChange(record: record, entity: "Project", kind: .insert, values: ["name": .text("a")], stamps: ["*": "01a216b75f00-0000-00000000000000aa"]),
            WireChange(record: record, entity: "Project", kind: .update, values: ["name": .text("b")], stamps: ["name": stamp]),
            WireChange(record: record, entity: "Project", kind: .update, values: ["name": .text("c")], stamps: ["name": stamp]),
        ]
        try store.write(author: "sync") { db in
            try SyncStore.create(db)
            var outcome = ChangeApplier.Outcome()
            for (index, change) in changes.enumerated() {
                try applier.apply(LogEntry(position: Int64(index + 1), change: change, schemaVersion: 1), db, into: &outcome)
            }
        }
        let row = try #require(try store.read { db in try Row.fetchOne(db, sql: ##"SELECT name, "#hlc" FROM Project WHERE "#id" = ?"##, arguments: [SyncFixtures.id(101)]) })
        #expect(row[0] as String == "c")
        #expect(ChangeApplier.stamps(row[1])?["name"]?.description == stamp)
    }
}

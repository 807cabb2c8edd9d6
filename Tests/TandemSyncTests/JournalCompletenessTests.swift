import Tandem
import Testing
import TandemSyncTestSupport

/// Whether a store's journal holds every insert it made, which lets the first push skip
/// scanning every row for a snapshot.
@Suite("Journal completeness")
struct JournalCompletenessTests {
    /// A store journaled since its creation, with all its history, skips the snapshot's scan
    /// of every row: the journal holds every insert. Deleting history brings the scan back.
    @Test func aStoreJournaledSinceItsCreationHoldsEveryInsert() async throws {
        let c = try SyncFixtures.memoryStore("todos")
        #expect(try c.read { db in try ModelContainer.journalHoldsEveryInsert(db) }, "an empty new store")
        for n in 20...24 { try SyncFixtures.insert(c, n, title: "t", rank: n) }
        #expect(try c.read { db in try ModelContainer.journalHoldsEveryInsert(db) })
        _ = try c.deleteHistory(before: HistoryToken(rawValue: 3))
        #expect(try c.read { db in try ModelContainer.journalHoldsEveryInsert(db) } == false)
    }
}

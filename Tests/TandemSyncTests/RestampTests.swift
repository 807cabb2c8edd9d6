import Foundation
import TandemLocking
import Testing
import GRDB
import Tandem
import TandemSchema
@testable import TandemSync
import TandemSyncTestSupport

/// Edits the server refused as stamped ahead of its clock, stamped again (no I/O).
@Suite("Stamping again after a clock ran ahead")
struct RestampTests {
    /// A store whose clock ran a day ahead pulled a change of another replica (its clock a
    /// little ahead of the server's, within the tolerance) and then had its edit refused: the
    /// edit, stamped again, stays after the pulled change (HLC receive). Before, it was stamped
    /// with the server's time, older than the change it had seen: its insert lost to a delete
    /// pulled before it was made, and it kept the record for good (hard soak, seed
    /// 7291274231865).
    @Test func anEditStampedAgainStaysAfterEverythingPulled() throws {
        let day: Int64 = 86_400_000, real: Int64 = 1_800_000_000_000
        final class Wall: Sendable { let now = Locked<Int64>(0) }
        let wall = Wall()
        wall.now.withLock { $0 = real + day }
        var configuration = ModelConfiguration(isStoredInMemoryOnly: true, dataset: "todos")
        configuration.clock = WallClock(
            { Date(timeIntervalSince1970: Double(wall.now.withLock { $0 }) / 1000) },
            monotonic: { MonotonicReading(bootID: "one", milliseconds: 5_000 + wall.now.withLock { $0 } - real - day) })
        let store = try ModelContainer(schema: SyncFixtures.schema, configuration: configuration)
        // A pulled delete stamped 400 ms ahead of the server by another replica.
        let received = HLCTimestamp(physical: UInt64(real + 400), counter: 0, node: 7)
        try store.write(author: "sync") { db in try ModelContainer.advanceClock(past: received, in: db) }
        try SyncFixtures.insert(store, 1, title: "ahead")  // stamped a day ahead
        try store.recordServerTime(real)
        let ceiling = HLCTimestamp(physical: UInt64(real + 300_000), counter: .max, node: .max)
        let replaced = try store.restampLocalChanges(above: ceiling, after: HistoryToken(rawValue: 0))
        #expect(replaced.count == 1)
        let stamp = try #require(replaced.values.first)
        #expect(stamp > received, "\(stamp) must come after \(received)")
        #expect(stamp <= ceiling)
    }
}

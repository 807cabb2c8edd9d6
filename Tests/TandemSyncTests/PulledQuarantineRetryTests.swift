import Foundation
import GRDB
import Logging
import Tandem
import Testing
import TandemWire
@testable import TandemSync
import TandemSyncTestSupport

/// Pulled changes set aside (a bootstrap's links, cut by a crash before it applied them all)
/// are retried in as many rounds as let some out, not only one round's worth.
@Suite("Pulled quarantine retried")
struct PulledQuarantineRetryTests {
    @Test func moreThanOneRoundsWorthIsAppliedInOneSync() async throws {
        let store = try SyncFixtures.store()
        let waiting = 2 * SyncEngine.quarantineRetryLimit + 266
        try store.write(author: "sync") { db in
            try SyncStore.create(db)
            for n in 1...waiting {
                let change = WireChange(
                    record: "tandem://todos/Todo/\(SyncFixtures.id(n))", entity: "Todo", kind: .insert,
                    values: ["title": .text("t\(n)"), "rank": .integer(Int64(n)), "project": .null], stamps: ["*": "01a216b75f00-0000-00000000000000aa"])
                try SyncStore.quarantine(
                    WireJSON.data { $0.append(change) }.utf8Text, position: Int64(n), reason: "its link's records came in a later page", at: 0,
                    record: change.record, schemaVersion: 1, db)
            }
        }
        let engine = SyncEngine(
            container: store, transport: MemoryTransport { _ in TransportResponse(status: 500) }, configuration: SyncConfiguration(token: { "t" }),
            logger: Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() }))
        let outcome = try await engine.retryPulledQuarantineWhileItShrinks()
        #expect(outcome.applied == waiting)
        #expect(try store.read { db in try SyncStore.quarantineCounts(db).pulled } == 0)
        #expect(try SyncFixtures.rows(store).count == waiting)
    }
}

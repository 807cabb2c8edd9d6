import Foundation
import NIOConcurrencyHelpers
import Logging
import Testing
import Tandem
import TandemWire
@testable import TandemSync
import TandemSyncTestSupport

/// What a push looks like on the wire: compact stamps and the short answer, and the values
/// that lost logged against their own record from it.
@Suite("Push form")
struct PushFormTests {
    /// The losing change is not the batch's first: its values are logged against its own
    /// record from the short answer.
    @Test func pushesCarryCompactStampsAndTheValuesThatLostAreLoggedFromTheShortAnswer() async throws {
        try await ConflictTableTests.world { w in
            let sent = NIOLockedValueBox<[PushRequest]>([])
            let recording = MemoryTransport { request in
                if request.path.hasSuffix("/push"), let body = request.body {
                    let push = try WireJSONReader.pushRequest(body)
                    sent.withLockedValue { $0.append(push) }
                }
                return try await w.transport.send(request)
            }
            try SyncFixtures.delete(w.a, 1)
            try await ConflictTableTests.tick()
            try SyncFixtures.insert(w.b, 2, title: "new on B", rank: 2)
            try SyncFixtures.update(w.b, 1, "rank", 20)
            _ = try await w.syncA.sync()
            let quiet = Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() })
            sent.withLockedValue { $0 = [] }
            let summary = try await SyncEngine(container: w.b, transport: recording, configuration: SyncConfiguration(token: { w.token }), logger: quiet).sync()
            let pushes = sent.withLockedValue { $0 }
            let stamped = pushes.flatMap(\.changes).allSatisfy(\.hasDefaultStamp)
            #expect(!pushes.isEmpty && pushes.allSatisfy { $0.outcomes == .lost }, "the client asks for the short answer")
            #expect(stamped, "every change carries a default stamp under \"*\"")
            #expect(summary.pushed == 2 && summary.conflicts == 1, "\(summary)")
            #expect(try SyncStatus.conflicts(of: w.b).contains { $0.rule == "deleteWins" && $0.winner == .server && $0.localValue == "20" && $0.record.hasSuffix(SyncFixtures.id(1)) })
            _ = try await w.syncA.sync()
            #expect(try w.converged())
        }
    }
}

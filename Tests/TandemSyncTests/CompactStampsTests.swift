import Foundation
import Synchronization
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
import Tandem
import TandemServer
import TandemWire
@testable import TandemSync

/// A client newer than its server: pushes fall back to a stamp per value instead of being
/// quarantined one by one, and an answer listing every outcome reads as well as a short one.
@Suite("A client against an older server")
struct CompactStampsTests {
    @Test func aServerOlderThanCompactStampsGetsAStampPerValueAndNothingIsQuarantined() async throws {
        let storage = MemoryServerStorage()
        let token = try await TokenIssuer.issue(for: try await storage.addUser(name: "ann", now: 0), in: storage)
        let quiet = Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() })
        let app = Application(router: buildRouter(ServerDependencies(storage: storage)), logger: quiet)
        try await app.test(.router) { client in
            let server = ConvergenceSimulationTests.transport(client)
            let refused = Mutex(0)
            let keys = Mutex((compact: Set<String>(), perValue: Set<String>()))
            // What a server before compact stamps answers to a "*" among an insert's or
            // update's stamps.
            let older = MemoryTransport { request in
                if request.path.hasSuffix("/push"), let body = request.body, let push = try? WireJSONReader.pushRequest(body) {
                    let key = request.headers["Idempotency-Key"] ?? ""
                    if push.changes.contains(where: { $0.kind != .delete && $0.stamps[WireChange.deleteStampKey] != nil }) {
                        refused.withLock { $0 += 1 }
                        keys.withLock { _ = $0.compact.insert(key) }
                        return TransportResponse(status: 422, body: Data(#"{"error":{"code":"invalid_stamp","message":"changes[0].stamps must have exactly one stamp per value"}}"#.utf8))
                    }
                    keys.withLock { _ = $0.perValue.insert(key) }
                }
                return try await server.send(request)
            }
            let a = try ConvergenceSimulationTests.store("todos"), b = try ConvergenceSimulationTests.store("todos")
            for n in 1...30 { try SyncFixtures.insert(a, n, title: "t\(n)", rank: n) }
            try SyncFixtures.update(a, 3, "title", "edited")
            var configuration = SyncConfiguration(token: { token })
            configuration.pushBatchSize = 7   // several batches, two in flight: both refused at once
            let summary = try await SyncEngine(container: a, transport: older, configuration: configuration, logger: quiet).sync()
            #expect(summary.quarantined == 0 && summary.pushed == 31, "\(summary)")
            #expect(refused.withLock { $0 } >= 1, "the older server did refuse the compact pushes")
            // The two forms of a batch never share a key (the server hashes a push as sent).
            let used = keys.withLock { $0 }
            #expect(used.compact.allSatisfy { $0.hasPrefix("cl~") } && used.perValue.allSatisfy { $0.hasPrefix("l~") }, "\(used)")
            #expect(Set(used.compact.map { $0.dropFirst(3) }).isDisjoint(with: used.perValue.map { $0.dropFirst(2) }) == false,
                    "a refused batch was sent again under its own key")
            #expect(try SyncStatus.quarantined(of: a).isEmpty)
            _ = try await SyncEngine(container: b, transport: server, configuration: SyncConfiguration(token: { token }), logger: quiet).sync()
            #expect(try SyncFixtures.rows(b) == SyncFixtures.rows(a))
            #expect(try SyncFixtures.rows(b)[SyncFixtures.id(3)]?.first == "edited")
        }
    }

    /// The values that lost are logged against their own record, from either answer (the
    /// losing change is not the batch's first).
    @Test(arguments: [true, false])
    func aServerThatListsEveryOutcomeHasTheValuesThatLostLoggedAsWell(older isOlder: Bool) async throws {
        try await ConflictTableTests.world { w in
            // What a server before the short answer does: it ignores "outcomes" and lists
            // every change's outcome, in order.
            let asked = Mutex<[PushRequest.OutcomeDetail?]>([])
            let older = MemoryTransport { request in
                var request = request
                if request.path.hasSuffix("/push"), let body = request.body {
                    var push = try WireJSONReader.pushRequest(body)
                    asked.withLock { $0.append(push.outcomes) }
                    push.outcomes = nil
                    request.body = WireJSON.data { $0.append(push) }
                }
                let response = try await w.transport.send(request)
                if request.path.hasSuffix("/push"), response.status == 200 {
                    #expect(try WireJSONReader.pushResponse(response.body).changeCount == nil)
                }
                return response
            }
            try SyncFixtures.delete(w.a, 1)
            try await ConflictTableTests.tick()
            try SyncFixtures.insert(w.b, 2, title: "new on B", rank: 2)
            try SyncFixtures.update(w.b, 1, "rank", 20)
            _ = try await w.syncA.sync()
            let quiet = Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() })
            let summary = try await SyncEngine(container: w.b, transport: isOlder ? older : w.transport, configuration: SyncConfiguration(token: { w.token }), logger: quiet).sync()
            if isOlder {
                #expect(asked.withLock { $0 }.allSatisfy { $0 == .lost } && !asked.withLock { $0 }.isEmpty, "the client asks for the short answer")
            }
            #expect(summary.pushed == 2 && summary.conflicts == 1, "\(summary)")
            #expect(try SyncStatus.conflicts(of: w.b).contains { $0.rule == "deleteWins" && $0.winner == .server && $0.localValue == "20" && $0.record.hasSuffix(SyncFixtures.id(1)) })
            _ = try await w.syncA.sync()
            #expect(try w.converged())
        }
    }
}

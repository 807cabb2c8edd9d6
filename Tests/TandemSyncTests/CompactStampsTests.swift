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
/// quarantined one by one.
@Suite("Compact stamps against an older server")
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
            #expect(used.compact.allSatisfy { $0.hasPrefix("c~") } && used.perValue.allSatisfy { !$0.hasPrefix("c~") }, "\(used)")
            #expect(used.compact.isDisjoint(with: used.perValue.map { "c~" + $0 }) == false, "a refused batch was sent again under its own key")
            #expect(try SyncStatus.quarantined(of: a).isEmpty)
            _ = try await SyncEngine(container: b, transport: server, configuration: SyncConfiguration(token: { token }), logger: quiet).sync()
            #expect(try SyncFixtures.rows(b) == SyncFixtures.rows(a))
            #expect(try SyncFixtures.rows(b)[SyncFixtures.id(3)]?.first == "edited")
        }
    }
}

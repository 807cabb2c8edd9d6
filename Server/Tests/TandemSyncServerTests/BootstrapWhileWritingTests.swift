import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOConcurrencyHelpers
import Testing
import Tandem
import TandemServer
@testable import TandemSync
import TandemSyncTestSupport
import TandemWire

/// A replica joining from the snapshot while writers push between every two of its pages:
/// the snapshot's position is its first page's, so whatever came after is pulled, and the
/// replica ends equal to the writer.
@Suite("Bootstrapping while writers push")
struct BootstrapWhileWritingTests {
    @Test(arguments: [false, true])
    func aReplicaBootstrappingWhileAWriterPushesBetweenItsPagesEndsEqual(onSQLite: Bool) async throws {
        let storage: any ServerStorage
        if onSQLite {
            let directory = FileManager.default.temporaryDirectory.appending(path: "tandem-bootstrap-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            storage = try SQLiteServerStorage(path: directory.appending(path: "tandem.sqlite").path(percentEncoded: false))
        } else {
            storage = MemoryServerStorage()
        }
        let token = try await TokenIssuer.issue(for: try await storage.addUser(name: "ann", now: 0), in: storage)
        var configuration = ServerConfiguration()
        configuration.requestsPerSecond = 0
        configuration.maxPageSize = 7  // many pages
        let app = Application(
            router: buildRouter(ServerDependencies(storage: storage, configuration: configuration)),
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        try await app.test(.router) { client in
            let base = ConvergenceSimulationTests.transport(client)
            let writer = try SyncFixtures.memoryStore("todos")
            let writerEngine = SyncEngine(container: writer, transport: base, configuration: SyncConfiguration(token: { token }))
            for n in 1...60 { try SyncFixtures.insert(writer, n, title: "todo \(n)", rank: n) }
            _ = try await writerEngine.sync()

            // Before each snapshot page is answered, the writer edits records of pages sent
            // already and of pages to come, deletes one, makes one, and pushes.
            let round = Counter()
            let meddling = MemoryTransport { request in
                if request.path.contains("/snapshot") {
                    let r = round.next()
                    try SyncFixtures.update(writer, 1 + (r * 7) % 60, "title", "edited in round \(r)")
                    try SyncFixtures.update(writer, 60 - (r * 5) % 60, "rank", 1_000 + r)
                    if r % 3 == 0 { try? SyncFixtures.delete(writer, 2 + r) }
                    try SyncFixtures.insert(writer, 100 + r, title: "new in round \(r)")
                    _ = try await writerEngine.sync()
                }
                return try await base.send(request)
            }
            let reader = try SyncFixtures.memoryStore("todos")
            let readerEngine = SyncEngine(container: reader, transport: meddling, configuration: SyncConfiguration(token: { token }))
            let summary = try await readerEngine.sync()
            #expect(summary.isComplete)
            #expect(round.value >= 8, "the bootstrap read \(round.value) pages")
            // Each page one marker; what came after the snapshot's position is pulled (and
            // journaled) as usual.
            let markers = try reader.fetchHistory(HistoryDescriptor()).filter { $0.contextName == "snapshot" }
            #expect(markers.count == round.value && markers.allSatisfy { $0.changes.isEmpty && $0.author == "sync" })
            #expect(try SyncFixtures.state(reader) == SyncFixtures.state(writer))
            // And on: later edits arrive by the log.
            try SyncFixtures.update(writer, 10, "title", "later")
            _ = try await writerEngine.sync()
            _ = try await readerEngine.sync()
            #expect(try SyncFixtures.state(reader) == SyncFixtures.state(writer))
        }
    }
}

/// A counter shared with a transport's closure.
final class Counter: Sendable {
    private let count = NIOLockedValueBox(0)
    func next() -> Int {
        count.withLockedValue { value in
            defer { value += 1 }
            return value
        }
    }
    var value: Int { count.withLockedValue { $0 } }
}

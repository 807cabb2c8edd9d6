import Foundation
import NIOConcurrencyHelpers
import GRDB
import Hummingbird
import HummingbirdTesting
import Logging
import TandemServer
import Testing
import Tandem
import TandemSchema
import TandemWire
@testable import TandemSync
import TandemSyncTestSupport

/// Pushes read the journal a range at a time, and a range may end inside a transaction, so
/// a bulk import is never held in memory whole.
@Suite("Push ranges")
struct PushRangeTests {
    /// Inserts todos `numbers` in one transaction.
    static func bulkInsert(_ store: ModelContainer, _ numbers: ClosedRange<Int>) throws {
        try store.write(author: "app") { db in
            for n in numbers {
                try db.execute(sql: "INSERT INTO Todo (\"#id\", title, rank) VALUES (?, ?, ?)", arguments: [SyncFixtures.id(n), "bulk \(n)", n])
            }
        }
    }

    /// The next range is read ahead while one is sent. Changes committed meanwhile, inside a
    /// range already read and after the last one, are all pushed by the same sync, each once.
    @Test func changesCommittedWhileRangesAreSentArePushedByTheSameSync() async throws {
        try await ConflictTableTests.world { w in
            try Self.bulkInsert(w.a, 100...129)  // 30 changes
            let keys = KeyLog()
            let a = w.a
            let writing = CommittingTransport(wrapping: KeyRecordingTransport(wrapping: w.transport, keys: keys, failAfter: nil)) { pushes in
                // While ranges are sent: a new record, and an edit of one already pushed.
                if pushes == 2 { try SyncFixtures.insert(a, 200, title: "during") }
                if pushes == 5 { try SyncFixtures.update(a, 100, "title", "edited during") }
                // And one more during every later push, the last range's included.
                if pushes >= 6 && pushes < 12 { try SyncFixtures.insert(a, 300 + pushes, title: "late") }
            }
            let token = w.token
            var configuration = SyncConfiguration(token: { token })
            configuration.pushRangeChanges = 12
            configuration.pushBatchSize = 4
            let summary = try await SyncEngine(container: w.a, transport: writing, configuration: configuration).sync()
            // Each change once: the bulk, the record and the edit, and every late record.
            let late = try SyncFixtures.rows(w.a).values.filter { $0.first == "late" }.count
            #expect(late > 0 && summary.pushed == 30 + 2 + late)
            #expect(try SyncStatus(of: w.a).pendingChanges == 0, "every change committed during the sync is pushed by it")
            #expect(await keys.keys.values.allSatisfy { $0 == 1 }, "no batch sent twice")
            _ = try await w.syncB.sync()
            #expect(try w.converged())
            #expect(try SyncFixtures.rows(w.b)[SyncFixtures.id(200)]?.first == "during")
            #expect(try SyncFixtures.rows(w.b)[SyncFixtures.id(100)]?.first == "edited during")
            #expect(try SyncFixtures.rows(w.b).values.contains { $0.first == "late" })
        }
    }

    /// With two pushes in flight, a batch answered beside one whose answer is lost is sent
    /// again (same key, so it replays): the values that lost in it are logged once.
    @Test func valuesThatLostAreLoggedOnceWhenABatchIsSentAgain() async throws {
        try await ConflictTableTests.world { w in
            for n in 2...4 { try SyncFixtures.insert(w.a, n, title: "t", rank: n) }
            _ = try await w.syncA.sync()
            _ = try await w.syncB.sync()
            for n in 1...4 { try SyncFixtures.update(w.a, n, "title", "A \(n)") }  // older
            try await ConflictTableTests.tick()
            for n in 3...4 { try SyncFixtures.update(w.b, n, "title", "B \(n)") }  // newer: A's lose
            _ = try await w.syncB.sync()
            let token = w.token
            var configuration = SyncConfiguration(token: { token })
            configuration.pushBatchSize = 2  // records 1 and 2, then 3 and 4
            configuration.pushesInFlight = 2
            let losing = FirstAnswerLostTransport(w.transport)
            await #expect(throws: SyncError.self) { _ = try await SyncEngine(container: w.a, transport: losing, configuration: configuration).sync() }
            _ = try await SyncEngine(container: w.a, transport: losing, configuration: configuration).sync()
            let conflicts = try SyncStatus.conflicts(of: w.a)
            #expect(conflicts.count == 2, "each lost value once: \(conflicts.map { "\($0.record) \($0.attribute)" })")
            _ = try await w.syncB.sync()
            #expect(try w.converged())
            #expect(try SyncFixtures.rows(w.a)[SyncFixtures.id(3)]?.first == "B 3")
        }
    }

    /// A range left in flight is resumed with the batches it was cut into, even when the
    /// batch size changed since (a new default, or the app's setting): the batch index saved
    /// counts those batches, so cutting anew would skip changes never sent.
    @Test func aRangeLeftInFlightIsResumedWithTheBatchesItWasCutInto() async throws {
        try await ConflictTableTests.world { w in
            try Self.bulkInsert(w.a, 100...111)  // 12 changes in one transaction
            let token = w.token
            var small = SyncConfiguration(token: { token })
            small.pushBatchSize = 2
            small.pushesInFlight = 1
            // Ranges of 2, 4 and 6 changes (one window, then doubling): the third range's first
            // batch is answered, its second one's answer lost.
            let losing = KeyRecordingTransport(wrapping: w.transport, keys: KeyLog(), failAfter: 4)
            await #expect(throws: SyncError.self) { _ = try await SyncEngine(container: w.a, transport: losing, configuration: small).sync() }
            var large = small
            large.pushBatchSize = 5
            _ = try await SyncEngine(container: w.a, transport: w.transport, configuration: large).sync()
            #expect(try SyncStatus(of: w.a).pendingChanges == 0)
            _ = try await w.syncB.sync()
            let rows = try SyncFixtures.rows(w.b)
            #expect(rows.count == 13, "the world's first record and every one of the 12 reach B: \(rows.count)")
            #expect(try w.converged())
        }
    }

    /// A server with a lower cap on changes per push than the client's batch size: its
    /// capabilities name the cap, and every batch is cut to it from the first one, with no
    /// refused push.
    @Test func batchesAreCutToTheCapTheServersCapabilitiesName() async throws {
        try await Self.withLowCapServer(advertising: nil) { transport, pushes, token, quiet in
            let a = try SyncFixtures.memoryStore("todos", schema: SyncFixtures.schema)
            try Self.bulkInsert(a, 100...139)
            var configuration = SyncConfiguration(token: { token })
            configuration.pushBatchSize = 8
            let engine = SyncEngine(container: a, transport: transport, configuration: configuration, logger: quiet)
            let summary = try await engine.sync()
            #expect(summary.pushed == 40 && summary.quarantined == 0)
            #expect(await engine.capabilities?.maxChangesPerPush == 3)
            #expect(await engine.batchLimit == nil, "nothing was refused")
            let sent = pushes.sent.withLockedValue { $0 }
            #expect(sent.allSatisfy { $0.status == 200 && $0.changes <= 3 }, "\(sent)")
            #expect(sent.count == 14, "40 changes in batches of 3: \(sent.count) pushes")
        }
    }

    /// A server whose cap dropped after the client's handshake (restarted with a lower
    /// `maxChangesPerPush`) refuses a batch as too large: the batch is sent in halves, and the
    /// ranges after it are cut to the cap the server names (the one read ahead meanwhile is
    /// cut again), instead of every batch being refused first.
    @Test func aCapLoweredSinceTheHandshakeCostsOneRefusedBatchThenSmallerOnes() async throws {
        try await Self.withLowCapServer(advertising: 100) { transport, pushes, token, quiet in
            let a = try SyncFixtures.memoryStore("todos", schema: SyncFixtures.schema)
            try Self.bulkInsert(a, 100...139)  // 40 changes: five batches of 8
            var configuration = SyncConfiguration(token: { token })
            configuration.pushBatchSize = 8
            configuration.pushesInFlight = 1
            let engine = SyncEngine(container: a, transport: transport, configuration: configuration, logger: quiet)
            let summary = try await engine.sync()
            #expect(summary.pushed == 40 && summary.quarantined == 0)
            #expect(await engine.batchLimit == 3)
            // The first batch of 8 costs three refusals (8, then its halves of 4); every range
            // after it is cut to 3.
            let refused = pushes.sent.withLockedValue { $0.filter { $0.status == 413 }.count }
            #expect(refused == 3, "\(pushes.sent.withLockedValue { $0 })")
            let pulled = try await SyncEngine(
                container: SyncFixtures.memoryStore("todos", schema: SyncFixtures.schema), transport: transport,
                configuration: SyncConfiguration(token: { token }), logger: quiet
            ).sync()
            #expect(pulled.pulled == 40)
        }
    }

    /// A server taking at most 3 changes per push, whose capabilities answer says so, or says
    /// `advertising` instead; `body` gets a transport that records each push's size and status.
    static func withLowCapServer(
        advertising: Int?,
        _ body: @Sendable (MemoryTransport, PushLog, String, Logger) async throws -> Void
    ) async throws {
        let storage = MemoryServerStorage()
        let token = try await TokenIssuer.issue(for: try await storage.addUser(name: "ann", now: 0), in: storage)
        var server = ServerConfiguration()
        server.maxChangesPerPush = 3
        let quiet = Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() })
        let app = Application(router: buildRouter(ServerDependencies(storage: storage, configuration: server)), logger: quiet)
        try await app.test(.router) { client in
            let base = ConvergenceSimulationTests.transport(client)
            let pushes = PushLog()
            let transport = MemoryTransport { request in
                var response = try await base.send(request)
                if request.path.hasSuffix("/push"), let sent = request.body {
                    let changes = (try? WireJSONReader.pushRequest(sent))?.changes.count ?? -1
                    pushes.sent.withLockedValue { $0.append((changes, response.status)) }
                }
                if request.path == "/v1/capabilities", let advertising,
                    var capabilities = try? JSONDecoder().decode(ServerCapabilities.self, from: response.body)
                {
                    capabilities.maxChangesPerPush = advertising
                    response.body = try JSONEncoder().encode(capabilities)
                }
                return response
            }
            try await body(transport, pushes, token, quiet)
        }
    }

    /// Each push a test server answered: how many changes it held, and the status.
    final class PushLog: Sendable {
        let sent = NIOLockedValueBox<[(changes: Int, status: Int)]>([])
    }

    /// A server of another protocol version: the handshake stops with a message naming both,
    /// before anything is pushed or pulled.
    @Test func aServerOfAnotherProtocolVersionIsRefusedInTheHandshake() async throws {
        let requests = NIOLockedValueBox<[String]>([])
        let transport = MemoryTransport { request in
            requests.withLockedValue { $0.append(request.path) }
            let capabilities = ServerCapabilities(
                protocolVersion: 2, maxChangesPerPush: 5_000, maxPageSize: 5_000, maxBodyBytes: 8 << 20,
                maxClockSkewMilliseconds: 300_000)
            return TransportResponse(status: 200, headers: ["tandem-server-time": "\(Int64(Date().timeIntervalSince1970 * 1000))"], body: try JSONEncoder().encode(capabilities))
        }
        let a = try SyncFixtures.memoryStore("todos", schema: SyncFixtures.schema)
        try Self.bulkInsert(a, 1...2)
        let engine = SyncEngine(
            container: a, transport: transport, configuration: SyncConfiguration(token: { "tdm_x" }),
            logger: Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() }))
        let error = await #expect(throws: SyncError.self) { try await engine.sync() }
        #expect(error?.code == .unsupportedProtocol)
        #expect(error?.message.contains("protocol 2") == true && error?.message.contains("speaks 1") == true, "\(error?.message ?? "")")
        #expect(requests.withLockedValue { $0 } == ["/v1/capabilities"])
        #expect(try SyncStatus(of: a).pendingChanges == 2)
    }

    @Test func theCapIsReadFromTheServersMessage() {
        #expect(PushRequest.cap(inTooManyChangesMessage: PushRequest.tooManyChangesMessage(2_500, cap: 1_000)) == 1_000)
        #expect(PushRequest.cap(inTooManyChangesMessage: "2500 changes; a push holds at most 1000") == 1_000, "the words servers have always sent")
        #expect(PushRequest.cap(inTooManyChangesMessage: "too many changes") == nil)
    }

    /// A store that only pulls moves its `sync` reader past what it pulled, so an idle sync
    /// does not read its pulled history again; never past a local transaction.
    @Test func pulledHistoryIsAcknowledgedButNeverPastALocalChange() async throws {
        try await ConflictTableTests.world { w in
            for n in 10...14 { try SyncFixtures.insert(w.a, n, title: "from A") }
            _ = try await w.syncA.sync()
            _ = try await w.syncB.sync()
            #expect(try w.b.syncAcknowledged() == (try w.b.currentHistoryToken()), "B pulled five transactions and has nothing to push")
            // A local edit after more pulled changes: the reader stops before it.
            let before = try w.b.syncAcknowledged()
            try SyncFixtures.update(w.b, 10, "title", "local")
            try SyncFixtures.insert(w.a, 15, title: "from A")
            _ = try await w.syncA.sync()
            let b = ConflictPolicyTests.engine(w, w.b) { _ in }
            try await b.acknowledgePulled(after: before)
            #expect(try w.b.syncAcknowledged() == before)
            #expect(try SyncStatus(of: w.b).pendingChanges == 1)
            _ = try await b.sync()
            #expect(try SyncStatus(of: w.b).pendingChanges == 0)
            #expect(try w.b.syncAcknowledged() == (try w.b.currentHistoryToken()))
            _ = try await w.syncA.sync()
            #expect(try SyncFixtures.rows(w.a)[SyncFixtures.id(10)]?.first == "local")
        }
    }

    @Test func aTransactionLargerThanARangeIsPushedInSlicesAndAcknowledgedOnceWhole() async throws {
        try await ConflictTableTests.world { w in
            try Self.bulkInsert(w.a, 100...124)  // one transaction of 25 changes
            try SyncFixtures.update(w.a, 100, "title", "after")  // and a small one after it
            var slices: [Int] = []
            let a = ConflictPolicyTests.engine(w, w.a) { $0.pushRangeChanges = 7 }
            let acknowledgedBefore = try w.a.syncAcknowledged()
            // Three slices of the bulk transaction: none of them acknowledges it.
            for _ in 0..<3 {
                let range = try #require(try await a.nextRange(after: acknowledgedBefore))
                slices.append(range.transactions.reduce(0) { $0 + $1.changes.count })
                #expect(range.finishedThrough == nil || range.finishedThrough! <= acknowledgedBefore)
                try w.a.write(author: "sync") { db in
                    try PushedChange(acknowledged: acknowledgedBefore.rawValue, token: range.lastToken.rawValue, changeID: range.throughChange).save(db)
                    try InFlightRange.clear(db)
                }
            }
            #expect(slices == [7, 7, 7])
            // The fourth finishes it: 4 bulk changes, then the small transaction.
            let last = try #require(try await a.nextRange(after: acknowledgedBefore))
            #expect(last.transactions.map(\.changes.count) == [4, 1])
            #expect(last.finishedThrough == last.lastToken)
            // Nothing was sent: forget the simulated progress.
            try w.a.write(author: "sync") { db in
                try PushedChange.clear(db)
                try InFlightRange.clear(db)
            }

            // The whole thing through the engine, then B has every row.
            let summary = try await a.sync()
            #expect(summary.pushed == 26)
            #expect(try SyncStatus(of: w.a).pendingChanges == 0)
            _ = try await w.syncB.sync()
            #expect(try SyncFixtures.rows(w.b).count == 26)
            #expect(try SyncFixtures.rows(w.b)[SyncFixtures.id(100)]?.first == "after")
        }
    }

    /// Deleting all history lets SQLite hand out change ids again from 1: a later push must
    /// not reuse an earlier push's idempotency key (the server would refuse it as a reused
    /// key with another body), so keys name the transactions' tokens, never reused.
    @Test func changeIDsReusedAfterHistoryIsDeletedStillGetNewKeys() async throws {
        try await ConflictTableTests.world { w in
            // A dataset of its own, so nothing is pulled in between and the pushed change is
            // the journal's first.
            let c = try SyncFixtures.memoryStore("other"), d = try SyncFixtures.memoryStore("other")
            let syncC = SyncEngine(container: c, transport: w.transport, configuration: SyncConfiguration(token: { w.token }))
            try SyncFixtures.insert(c, 7, title: "first")
            #expect(try c.fetchHistory(HistoryDescriptor()).first?.changes.first?.id == 1)
            _ = try await syncC.sync()
            let removed = try c.deleteHistory(before: HistoryToken(rawValue: try c.currentHistoryToken().rawValue + 1))
            #expect(removed > 0)
            #expect(try c.fetchHistory(HistoryDescriptor()).isEmpty)
            try SyncFixtures.update(c, 7, "title", "second")
            #expect(try c.fetchHistory(HistoryDescriptor()).first?.changes.first?.id == 1, "the change table starts again at 1")
            let summary = try await syncC.sync()
            #expect(summary.pushed == 1 && summary.quarantined == 0)
            _ = try await SyncEngine(container: d, transport: w.transport, configuration: SyncConfiguration(token: { w.token })).sync()
            #expect(try SyncFixtures.rows(d)[SyncFixtures.id(7)]?.first == "second")
        }
    }

    /// With one push in flight, only the batch whose answer was lost is sent twice; with two,
    /// also the one sent beside it (its answer is dropped with the failed sync).
    @Test(arguments: [1, 2]) func aSliceInterruptedAfterSomeBatchesResumesWithTheSameKeys(inFlight: Int) async throws {
        try await ConflictTableTests.world { w in
            try Self.bulkInsert(w.a, 100...129)  // 30 changes in one transaction
            let keys = KeyLog()
            let counting = KeyRecordingTransport(wrapping: w.transport, keys: keys, failAfter: 3)
            let token = w.token
            var configuration = SyncConfiguration(token: { token })
            configuration.pushRangeChanges = 12
            configuration.pushBatchSize = 4
            configuration.pushesInFlight = inFlight
            let first = SyncEngine(container: w.a, transport: counting, configuration: configuration)
            await #expect(throws: SyncError.self) { _ = try await first.sync() }
            // Restarted (a crash, the daemon again): the same range, the same batch keys
            // from where it stopped, then the rest.
            counting.failAfter = nil
            _ = try await SyncEngine(container: w.a, transport: counting, configuration: configuration).sync()
            let sent = await keys.keys
            let resent = sent.values.filter { $0 == 2 }.count
            #expect(
                sent.count == 8 && sent.values.allSatisfy { $0 <= 2 } && (1...inFlight).contains(resent),
                "only the batches whose answers were lost are sent twice: \(sent)")
            _ = try await w.syncB.sync()
            #expect(try SyncFixtures.rows(w.b).count == 31)
            #expect(try SyncStatus(of: w.a).pendingChanges == 0)
        }
    }
}

/// Records push keys; after `failAfter` pushes, loses the next push's answer (the server
/// acted) once.
final class KeyRecordingTransport: Transport {
    let base: any Transport
    let keys: KeyLog
    private let limit: NIOLockedValueBox<Int?>
    var failAfter: Int? {
        get { limit.withLockedValue { $0 } }
        set { limit.withLockedValue { $0 = newValue } }
    }

    init(wrapping base: any Transport, keys: KeyLog, failAfter: Int?) {
        self.base = base
        self.keys = keys
        self.limit = NIOLockedValueBox(failAfter)
    }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        let response = try await base.send(request)
        guard request.path.hasSuffix("/push"), let key = request.headers["Idempotency-Key"] else { return response }
        _ = await keys.record(key)
        let fail = limit.withLockedValue { limit -> Bool in
            guard let remaining = limit else { return false }
            if remaining == 0 { limit = nil; return true }
            limit = remaining - 1
            return false
        }
        if fail { throw SyncError(.unreachable, "planted: the answer was lost") }
        return response
    }
}

/// Runs `commit` (a local write, as an app would make during a sync) before passing each
/// push on; `commit` gets the number of pushes sent before.
final class CommittingTransport: Transport {
    let base: any Transport
    let commit: @Sendable (Int) throws -> Void
    private let pushes = NIOLockedValueBox(0)

    init(wrapping base: any Transport, commit: @escaping @Sendable (Int) throws -> Void) {
        self.base = base
        self.commit = commit
    }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        if request.path.hasSuffix("/push") {
            let count = pushes.withLockedValue { count in
                defer { count += 1 }; return count
            }
            try commit(count)
        }
        return try await base.send(request)
    }
}

/// Loses the answer of the first push's first batch (the server applied it), once, after
/// the batch beside it was answered.
final class FirstAnswerLostTransport: Transport {
    let base: any Transport
    private let state = NIOLockedValueBox((secondAnswered: false, lost: false))
    init(_ base: any Transport) { self.base = base }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        let key = request.headers["Idempotency-Key"] ?? ""
        guard !state.withLockedValue({ $0.lost }) else { return try await base.send(request) }
        if key.hasSuffix(":0/2") {
            try await SyncFixtures.waitUntil { state.withLockedValue { $0.secondAnswered } }
            _ = try await base.send(request)
            state.withLockedValue { $0.lost = true }
            throw SyncError(.unreachable, "planted: the answer was lost")
        }
        let response = try await base.send(request)
        if key.hasSuffix(":1/2") { state.withLockedValue { $0.secondAnswered = true } }
        return response
    }
}

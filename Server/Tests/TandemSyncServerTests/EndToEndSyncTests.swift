import Foundation
import Testing
import Tandem
import TandemSchema
@testable import TandemSync
import TandemWire
import TandemSyncTestSupport

/// Stores that never talk to each other converge through a real `tandem-server` process,
/// over each live transport (libcurl, URLSession).
@Suite("Sync end to end (tandem-server process, libcurl and URLSession)", .serialized)
struct EndToEndSyncTests {
    static func engine(
        _ store: ModelContainer, _ server: SyncServerProcess, over kind: TransportKind = .curl, transport: (any Transport)? = nil
    ) throws -> SyncEngine {
        let token = server.token
        return SyncEngine(
            container: store, transport: try transport ?? kind.make(server.base),
            configuration: SyncConfiguration(token: { token }))
    }

    @Test(arguments: TransportKind.allCases)
    func twoStoresConvergeWithAConflictAndADeleteAgainstAnUpdate(kind: TransportKind) async throws {
        let server = try await SyncServerProcess.make()
        let a = try SyncFixtures.store(), b = try SyncFixtures.store()
        let syncA = try Self.engine(a, server, over: kind), syncB = try Self.engine(b, server, over: kind)
        for n in 1...3 { try SyncFixtures.insert(a, n, title: "todo \(n)", rank: n) }
        #expect(try await syncA.sync().pushed == 3)
        let first = try await syncB.sync()
        #expect(first.pulled == 3 && first.pushed == 0)
        #expect(try SyncFixtures.rows(b) == SyncFixtures.rows(a))

        // Offline on both: the same field edited (B later), and a delete against an update.
        try SyncFixtures.update(a, 1, "title", "from A")
        try await Task.sleep(for: .milliseconds(5))
        try SyncFixtures.update(b, 1, "title", "from B")
        try SyncFixtures.update(b, 2, "rank", 20)
        try SyncFixtures.delete(a, 2)
        try SyncFixtures.insert(b, 4, title: "new on B")

        let bSummary = try await syncB.sync()
        #expect(bSummary.pushed == 3)
        let aSummary = try await syncA.sync()
        #expect(aSummary.conflicts >= 1, "A's title lost to B's newer one")
        _ = try await syncB.sync()

        let rowsA = try SyncFixtures.rows(a), rowsB = try SyncFixtures.rows(b)
        #expect(rowsA == rowsB)
        #expect(rowsA[SyncFixtures.id(1)] == ["from B", "1"])
        #expect(rowsA[SyncFixtures.id(2)] == nil, "the delete wins against the concurrent update")
        #expect(rowsA[SyncFixtures.id(4)] == ["new on B", "nil"])

        let conflictsA = try SyncStatus.conflicts(of: a)
        #expect(conflictsA.contains { $0.attribute == "title" && $0.winner == .server && $0.localValue == #""from A""# && $0.remoteValue == #""from B""# })
        // B's update reached the server first; A, which deleted the record, logs it as lost.
        #expect(
            conflictsA.contains {
                $0.record.hasSuffix(SyncFixtures.id(2)) && $0.attribute == "rank" && $0.rule == "deleteWins"
                    && $0.winner == .local && $0.remoteValue == "20"
            })
        #expect(try SyncStatus(of: a).quarantined == 0 && SyncStatus(of: b).quarantined == 0)
        #expect(try SyncStatus(of: a).pendingChanges == 0)
        #expect(try SyncStatus(of: b).pendingChanges == 0)

        // Nothing left: a second round moves nothing.
        let idle = try await syncA.sync()
        #expect(idle.pushed == 0 && idle.pulled == 0)
    }

    @Test(arguments: TransportKind.allCases)
    func fiveStoresEditingOfflineConvergeThroughTheServer(kind: TransportKind) async throws {
        let server = try await SyncServerProcess.make()
        let stores = try (0..<5).map { _ in try SyncFixtures.store() }
        let engines = try stores.map { try Self.engine($0, server, over: kind) }
        for (i, store) in stores.enumerated() {
            for n in 0..<4 { try SyncFixtures.insert(store, i * 10 + n, title: "s\(i) n\(n)", rank: n) }
        }
        for engine in engines { _ = try await engine.sync() }
        for engine in engines { _ = try await engine.sync() }
        // Offline again: everyone edits record 1 (store 0's), store 1 deletes store 2's record 20.
        for (i, store) in stores.enumerated() {
            try SyncFixtures.update(store, 1, "title", "edit by \(i)")
            try await Task.sleep(for: .milliseconds(2))
        }
        try SyncFixtures.delete(stores[1], 20)
        try SyncFixtures.update(stores[2], 20, "rank", 99)
        for engine in engines.reversed() { _ = try await engine.sync() }
        for engine in engines { _ = try await engine.sync() }
        let rows = try stores.map(SyncFixtures.rows)
        #expect(rows.allSatisfy { $0 == rows[0] })
        #expect(rows[0].count == 19)
        #expect(rows[0][SyncFixtures.id(1)]?.first == "edit by 4", "the newest edit wins")
        #expect(rows[0][SyncFixtures.id(20)] == nil, "the delete wins")
    }

    @Test(arguments: TransportKind.allCases)
    func aStoreWithABreakingSchemaIsRefusedNamingTheRule(kind: TransportKind) async throws {
        let server = try await SyncServerProcess.make()
        let a = try SyncFixtures.store()
        _ = try await Self.engine(a, server, over: kind).sync()
        var breaking = SyncFixtures.schema
        breaking.entities[0].attributes[0].type = .scalar(.int)
        let c = try SyncFixtures.store(schema: breaking)
        await #expect { try await Self.engine(c, server, over: kind).sync() } throws: { error in
            guard let error = error as? SyncError else { return false }
            return error.code == .schemaIncompatible && error.message.contains("ATTRIBUTE_TYPE_CHANGED") && error.message.contains("Todo.title")
        }
    }

    @Test(arguments: TransportKind.allCases)
    func anUnreachableServerIsATransientErrorAndABadTokenIsNot(kind: TransportKind) async throws {
        let store = try SyncFixtures.store()
        let nowhere = SyncEngine(
            container: store, transport: try kind.make("http://127.0.0.1:1", timeout: 2),
            configuration: SyncConfiguration(token: { "t" }))
        await #expect { try await nowhere.sync() } throws: { ($0 as? SyncError)?.code == .unreachable && ($0 as? SyncError)?.isTransient == true }
        let server = try await SyncServerProcess.make()
        let bad = SyncEngine(
            container: store, transport: try kind.make(server.base),
            configuration: SyncConfiguration(token: { "tdm_000000000000_nope" }))
        await #expect { try await bad.sync() } throws: { ($0 as? SyncError)?.code == .unauthorized && ($0 as? SyncError)?.isTransient == false }
    }

    /// Two syncs of one store file at once (a daemon and `tandem sync`, say): each change is
    /// reported pushed once, by one of them; the other waits for it and finds nothing left.
    @Test(arguments: TransportKind.allCases)
    func twoSyncsOfOneStoreAtOnceReportEachChangePushedOnce(kind: TransportKind) async throws {
        let server = try await SyncServerProcess.make()
        let name = UUID().uuidString
        let one = try SyncFixtures.store(name), other = try SyncFixtures.store(name)
        for n in 1...300 { try SyncFixtures.insert(one, n, title: "todo \(n)") }
        let first = try Self.engine(one, server, over: kind), second = try Self.engine(other, server, over: kind)
        async let a = first.sync()
        async let b = second.sync()
        let (x, y) = try await (a, b)
        #expect(x.pushed + y.pushed == 300, "\(x.pushed) + \(y.pushed)")
        #expect(try SyncStatus(of: one).pendingChanges == 0)
        let fresh = try SyncFixtures.store()
        #expect(try await Self.engine(fresh, server, over: kind).sync().pulled == 300)
    }

    /// A user past their byte quota: the sync fails naming the quota, and the changes wait
    /// pending (not quarantined) until the operator raises it with `users quota`, against
    /// the running server.
    @Test(arguments: TransportKind.allCases)
    func aStorePastItsByteQuotaKeepsItsChangesPendingUntilTheOperatorRaisesIt(kind: TransportKind) async throws {
        let server = try await SyncServerProcess.make()
        let executable = try #require(SyncServerProcess.executable)
        let dir = server.dataDir.path(percentEncoded: false)
        // Room for the schema the first sync registers (1 212 bytes) and not much more.
        #expect(try SyncServerProcess.run(executable, ["users", "quota", "ann", "--bytes", "1300", "--data-dir", dir]).contains("0 of 1300 (own limit)"))
        let store = try SyncFixtures.store()
        let engine = try Self.engine(store, server, over: kind)
        for n in 1...3 { try SyncFixtures.insert(store, n, title: "todo \(n)", rank: n) }
        #expect(try await engine.sync().pushed == 3, "under the quota when it starts: taken whole")
        for n in 4...5 { try SyncFixtures.insert(store, n, title: "todo \(n)", rank: n) }
        await #expect { try await engine.sync() } throws: { error in
            guard let error = error as? SyncError else { return false }
            return error.code == .quotaExceeded && !error.isTransient && error.message.contains("quota_exceeded") && error.message.contains("pending")
        }
        #expect(try SyncStatus(of: store).pendingChanges == 2)
        #expect(try SyncStatus(of: store).quarantined == 0)

        let shown = try SyncServerProcess.run(executable, ["users", "quota", "ann", "--bytes", "1M", "--data-dir", dir])
        #expect(shown.contains("of 1048576 (own limit)"), "\(shown)")
        let summary = try await engine.sync()
        #expect(summary.pushed == 2)
        #expect(try SyncStatus(of: store).pendingChanges == 0)
        let other = try SyncFixtures.store()
        _ = try await Self.engine(other, server, over: kind).sync()
        #expect(try SyncFixtures.rows(other) == SyncFixtures.rows(store))
    }

    /// The answer to a push is lost after the server committed it: the retry sends the same
    /// idempotency key and nothing is applied twice.
    @Test(arguments: TransportKind.allCases)
    func aPushWhoseAnswerIsLostIsRetriedWithTheSameKeyAndAppliedOnce(kind: TransportKind) async throws {
        let server = try await SyncServerProcess.make()
        let live = try kind.make(server.base)
        let keys = KeyLog()
        let cut = MemoryTransport { request in
            let response = try await live.send(request)
            if request.path.hasSuffix("/push") {
                let key = request.headers["Idempotency-Key"] ?? ""
                if await keys.record(key) == 1 { throw SyncError(.unreachable, "planted: the answer was lost") }
            }
            return response
        }
        let a = try SyncFixtures.store()
        for n in 1...5 { try SyncFixtures.insert(a, n, title: "t\(n)") }
        let engine = try Self.engine(a, server, transport: cut)
        await #expect(throws: SyncError.self) { try await engine.sync() }
        #expect(try SyncStatus(of: a).pendingChanges == 5, "not acknowledged without the answer")
        let summary = try await engine.sync()
        #expect(summary.pushed == 5)
        let used = await keys.keys
        #expect(used.count == 1 && used.values.first == 2, "the retry used the same key: \(used)")
        let b = try SyncFixtures.store()
        let pulled = try await Self.engine(b, server, over: kind).sync()
        #expect(pulled.pulled == 5, "each change is in the server's log once")
        #expect(try SyncFixtures.rows(b) == SyncFixtures.rows(a))
    }
}

actor KeyLog {
    var keys: [String: Int] = [:]
    func record(_ key: String) -> Int {
        keys[key, default: 0] += 1
        return keys[key]!
    }
}

/// Cancelling the task that runs a sync (an app's background time running out) stops it
/// within moments over either transport, and loses nothing: the next sync pushes what was
/// not acknowledged, under the same keys, and each change reaches the server once.
@Suite("Cancelling a sync", .serialized)
struct SyncCancellationTests {
    /// Writes todos `numbers` in one transaction, as an app would.
    static func insertTodos(_ store: ModelContainer, _ numbers: ClosedRange<Int>) throws {
        try store.write(author: "app") { db in
            for n in numbers {
                try db.execute(sql: ##"INSERT INTO Todo ("#id", title, rank) VALUES (?, ?, ?)"##, arguments: [SyncFixtures.id(n), "todo \(n)", n])
            }
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aCancelledSyncStopsAtOnceAndTheNextOnePushesTheRestOnce(kind: TransportKind) async throws {
        let server = try await SyncServerProcess.make()
        let store = try SyncFixtures.store()
        try Self.insertTodos(store, 1...20_000)
        let token = server.token
        var configuration = SyncConfiguration(token: { token })
        configuration.pushBatchSize = 250  // many exchanges: the cancellation lands in the middle
        let live = try kind.make(server.base)
        let pushes = KeyLog()
        let counting = MemoryTransport { request in
            if request.path.hasSuffix("/push") { _ = await pushes.record("push") }
            return try await live.send(request)
        }
        let engine = SyncEngine(container: store, transport: counting, configuration: configuration)
        let syncing = Task { try await engine.sync() }
        while await pushes.keys["push"] ?? 0 < 3 { try await Task.sleep(for: .milliseconds(5)) }
        let cancelled = ContinuousClock.now
        syncing.cancel()
        await #expect(throws: CancellationError.self) { try await syncing.value }
        #expect(ContinuousClock.now - cancelled < .seconds(20), "the sync stopped (libcurl looks about once a second; a loaded machine adds seconds)")
        let pending = try SyncStatus(of: store).pendingChanges
        #expect(pending > 0 && pending < 20_000, "cut in the middle: \(pending) pending")

        let rest = try await engine.sync()
        #expect(rest.pushed > 0 && rest.pushed <= pending)
        #expect(try SyncStatus(of: store).pendingChanges == 0)
        let fresh = try SyncFixtures.store()
        let joined = try await EndToEndSyncTests.engine(fresh, server, over: kind).sync()
        #expect(joined.pulled == 20_000, "each record is on the server once")
        #expect(try SyncFixtures.rows(fresh) == SyncFixtures.rows(store))
    }

    /// A pull cut after the page that deleted a project (here the network goes; a cancelled
    /// sync or a crash cut it the same way) leaves the todo still pointing at the project to
    /// the next pull, which applies the delete rule once caught up.
    @Test func aDeleteRuleAPullCutShortLeftIsAppliedByTheNextPull() async throws {
        let server = try await SyncServerProcess.make()
        let a = try SyncFixtures.store(), b = try SyncFixtures.store()
        try SyncFixtures.insertProject(a, 1, name: "errands")
        _ = try await EndToEndSyncTests.engine(a, server).sync()
        _ = try await EndToEndSyncTests.engine(b, server).sync()
        // B puts a new todo in the project; A deletes the project (cascade), then writes 2 000
        // other todos.
        try SyncFixtures.insert(b, 2, title: "buy milk")
        try SyncFixtures.move(b, 2, to: 1)
        try SyncFixtures.deleteProject(a, 1)
        try Self.insertTodos(a, 100...2_099)
        _ = try await EndToEndSyncTests.engine(a, server).sync()
        // B's sync pushes its todo, applies the page with the delete, and loses the network
        // at the next page.
        let token = server.token
        var configuration = SyncConfiguration(token: { token })
        configuration.pullPageSize = 250
        let live = try TransportKind.curl.make(server.base)
        let pulls = KeyLog()
        let dropping = MemoryTransport { request in
            if request.method == "GET", request.path.contains("/pull"), await pulls.record("pull") > 1 {
                throw SyncError(.unreachable, "planted: the network went away")
            }
            return try await live.send(request)
        }
        await #expect(throws: SyncError.self) { try await SyncEngine(container: b, transport: dropping, configuration: configuration).sync() }
        #expect(try SyncFixtures.dangling(b) == [SyncFixtures.id(2)], "cut before the delete rule was decided")
        _ = try await SyncEngine(container: b, transport: live, configuration: configuration).sync()
        #expect(try SyncFixtures.dangling(b).isEmpty)
        #expect(try SyncFixtures.rows(b)[SyncFixtures.id(2)] == nil, "the todo went with its project (cascade)")
        #expect(
            try SyncStatus.conflicts(of: b, limit: 1_000).contains { $0.record.hasSuffix(SyncFixtures.id(2)) && $0.rule == "parentDeleted" },
            "and the conflict log says so")
        _ = try await EndToEndSyncTests.engine(a, server).sync()
        #expect(try SyncFixtures.state(a) == SyncFixtures.state(b), "the replicas converge")
    }

    /// A sync pulling many pages stops too (each page is fetched ahead, in a task of its own,
    /// which the caller's cancellation reaches), and the next one takes the rest.
    @Test(arguments: TransportKind.allCases)
    func aCancelledSyncStopsBetweenPulledPagesAndTheNextOneTakesTheRest(kind: TransportKind) async throws {
        let server = try await SyncServerProcess.make()
        let source = try SyncFixtures.store()
        try Self.insertTodos(source, 1...20_000)
        _ = try await EndToEndSyncTests.engine(source, server, over: kind).sync()
        let store = try SyncFixtures.store()
        let token = server.token
        var configuration = SyncConfiguration(token: { token })
        configuration.pullPageSize = 250  // many pages: the cancellation lands in the middle
        let live = try kind.make(server.base)
        let reads = KeyLog()
        let counting = MemoryTransport { request in
            if request.method == "GET", request.path.contains("/pull") || request.path.contains("/snapshot") { _ = await reads.record("page") }
            return try await live.send(request)
        }
        let engine = SyncEngine(container: store, transport: counting, configuration: configuration)
        let syncing = Task { try await engine.sync() }
        while await reads.keys["page"] ?? 0 < 4 { try await Task.sleep(for: .milliseconds(5)) }
        syncing.cancel()
        await #expect(throws: CancellationError.self, "cancelled, not pulled to the end") { try await syncing.value }
        let shown = try SyncFixtures.rows(store).count
        #expect(shown < 20_000, "cut in the middle: \(shown) records")

        _ = try await engine.sync()
        #expect(try SyncFixtures.rows(store) == SyncFixtures.rows(source), "the next sync took the rest")
    }
}

import Foundation
import Testing
import Tandem
@testable import TandemSync
import TandemSyncTestSupport

/// Live sync with real processes: `tandem daemon` (live by default) on two stores, a real
/// server. The daemons' full syncs are ten minutes apart, so only live sync can deliver an
/// edit within the tests' bounds (60 s). The bounds are generous so the tests never flake;
/// `Scripts/bench-live.sh` measures the real latency.
@Suite("Live sync (daemons)", .serialized)
struct LiveDaemonProcessTests {
    /// A live daemon on `store`, against `base` with `token`; full syncs ten minutes apart.
    static func daemon(store: URL, base: String, token: String, live: Bool = true) throws -> Process {
        let process = Process()
        process.executableURL = try #require(DaemonProcessTests.tandem, "tandem is not built: run `swift build --build-tests`")
        process.arguments =
            ["daemon", "--store", store.path(percentEncoded: false), "--server", base, "--interval", "600", "--max-backoff", "1"]
            + (live ? [] : ["--no-live"])
        process.environment = ProcessInfo.processInfo.environment.merging(["TANDEM_TOKEN": token, "TANDEM_LOG_LEVEL": "error"]) { _, new in new }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    static func stop(_ daemons: [Process]) {
        for daemon in daemons where daemon.isRunning {
            kill(daemon.processIdentifier, SIGTERM)
            daemon.waitUntilExit()
        }
    }

    /// How long until `store` holds record `n` with `title` (read from its file, no sync), or
    /// `nil` after `limit`.
    static func arrival(of n: Int, title: String, in store: ModelContainer, within limit: Duration = .seconds(120)) async throws -> Duration? {
        let started = ContinuousClock.now
        while ContinuousClock.now - started < limit {
            if try SyncFixtures.rows(store)[SyncFixtures.id(n)]?.first == title { return ContinuousClock.now - started }
            try await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }

    /// Waits until each of `stores` has done its first sync (its daemon then waits at the
    /// server): a loaded machine may take many seconds to get there.
    static func firstSynced(_ stores: ModelContainer...) async throws {
        let started = ContinuousClock.now
        while try stores.contains(where: { try SyncStatus(of: $0).lastSync == nil }), ContinuousClock.now - started < .seconds(120) {
            try await Task.sleep(for: .milliseconds(20))
        }
        for store in stores { #expect(try SyncStatus(of: store).lastSync != nil, "the daemon synced once") }
    }

    /// Two stores on files, with their daemons (started once the stores exist).
    static func pair(base: String, token: String, live: Bool = true) throws -> (a: ModelContainer, b: ModelContainer, daemons: [Process]) {
        let (urlA, a) = try DaemonProcessTests.storeFile()
        let (urlB, b) = try DaemonProcessTests.storeFile()
        let daemons = [
            try daemon(store: urlA, base: base, token: token, live: live), try daemon(store: urlB, base: base, token: token, live: live),
        ]
        return (a, b, daemons)
    }

    @Test func anEditReachesTheOtherStoreLiveBothWays() async throws {
        let server = try await SyncServerProcess.make()
        let (a, b, daemons) = try Self.pair(base: server.base, token: server.token)
        defer { Self.stop(daemons) }
        try await Self.firstSynced(a, b)
        try SyncFixtures.insert(a, 1, title: "from A")
        let inserted = try await Self.arrival(of: 1, title: "from A", in: b)
        #expect(inserted != nil && inserted! < .seconds(60), "insert A → B took \(String(describing: inserted))")
        try SyncFixtures.update(b, 1, "title", "edited on B")
        let updated = try await Self.arrival(of: 1, title: "edited on B", in: a)
        #expect(updated != nil && updated! < .seconds(60), "update B → A took \(String(describing: updated))")
    }

    /// The planted-bug check of the test above: with `--no-live` the daemons (full syncs ten
    /// minutes apart) deliver the edit late, so the bound there is live sync's doing. The
    /// pushing side still pushes at once, so only the pulling side is slow.
    @Test func withoutLiveSyncTheOtherStoreDoesNotSeeTheEditSoon() async throws {
        let server = try await SyncServerProcess.make()
        let (a, b, daemons) = try Self.pair(base: server.base, token: server.token, live: false)
        defer { Self.stop(daemons) }
        try await Self.firstSynced(a, b)
        try SyncFixtures.insert(a, 1, title: "from A")
        #expect(try await Self.arrival(of: 1, title: "from A", in: b, within: .seconds(4)) == nil)
    }

    /// The server killed with -9 while both daemons wait, and started again on the same data:
    /// they reconnect (backing off meanwhile) and an edit after the restart arrives live.
    @Test func daemonsReconnectAfterTheServerIsKilledAndConverge() async throws {
        let server = try await SyncServerProcess.make()
        let (a, b, daemons) = try Self.pair(base: server.base, token: server.token)
        defer { Self.stop(daemons) }
        try await Self.firstSynced(a, b)
        try SyncFixtures.insert(a, 1, title: "before")
        #expect(try await Self.arrival(of: 1, title: "before", in: b) != nil)
        kill(server.process.processIdentifier, SIGKILL)
        try await SyncServerProcess.offThread { server.process.waitUntilExit() }
        try SyncFixtures.insert(a, 2, title: "while down")
        try await Task.sleep(for: .seconds(1))
        try await server.started()
        #expect(try await Self.arrival(of: 2, title: "while down", in: b) != nil, "the edit made while the server was down arrives")
        try SyncFixtures.insert(b, 3, title: "after")
        let after = try await Self.arrival(of: 3, title: "after", in: a)
        #expect(after != nil && after! < .seconds(60), "live again after the restart: \(String(describing: after))")
        for daemon in daemons { #expect(daemon.isRunning) }
        #expect(try SyncFixtures.rows(a) == SyncFixtures.rows(b))
    }

    /// Two server nodes on one PostgreSQL database: A's daemon talks to node 1, B's to node
    /// 2, and an edit reaches the other store live (node 2 hears node 1's push).
    @Test func anEditReachesAStoreServedByAnotherNodeLive() async throws {
        guard let cluster = StorageCopyProcessTests.postgres else {
            #expect(ProcessInfo.processInfo.environment["TANDEM_TEST_REQUIRE_POSTGRES"] != "1", "TANDEM_TEST_POSTGRES_URL is not set")
            return
        }
        let executable = try #require(SyncServerProcess.executable)
        let database = try await SyncServerProcess.offThread { try StorageCopyProcessTests.newDatabase(cluster) }
        let token = try await SyncServerProcess.offThread {
            _ = try StorageCopyProcessTests.run(executable, ["users", "add", "ann", "--database", database])
            return try StorageCopyProcessTests.run(executable, ["tokens", "create", "ann", "--database", database]).output
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        var nodes: [SyncServerProcess] = []
        for _ in 0..<2 {
            let node = try await SyncServerProcess.make()
            await node.stopped()
            node.database = database
            try await node.started()
            nodes.append(node)
        }
        let (urlA, a) = try DaemonProcessTests.storeFile()
        let (urlB, b) = try DaemonProcessTests.storeFile()
        let daemons = [try Self.daemon(store: urlA, base: nodes[0].base, token: token), try Self.daemon(store: urlB, base: nodes[1].base, token: token)]
        defer { Self.stop(daemons) }
        try await Self.firstSynced(a, b)
        try SyncFixtures.insert(a, 1, title: "via node 1")
        let there = try await Self.arrival(of: 1, title: "via node 1", in: b)
        #expect(there != nil && there! < .seconds(60), "node 1 → node 2 took \(String(describing: there))")
        try SyncFixtures.update(b, 1, "title", "via node 2")
        let back = try await Self.arrival(of: 1, title: "via node 2", in: a)
        #expect(back != nil && back! < .seconds(60), "node 2 → node 1 took \(String(describing: back))")
    }
}

import Foundation
import GRDB
import Hummingbird
import HTTPTypes
import HummingbirdTesting
import Logging
import Testing
import Tandem
import TandemSchema
import TandemServer
@testable import TandemSync
import TandemWire
import TandemSyncTestSupport
import TandemURLSession

/// Many seeded histories in one process: replicas edit at random (inserts, updates, deletes,
/// re-inserts of deleted records) and sync in random order through a fault-injecting
/// transport (dropped requests, answers lost after the server acted, duplicated requests)
/// to the server's router with its in-memory storage. After the faults stop and everyone
/// syncs, every replica — and a fresh one that only pulls — must hold the same records.
/// The seed of a diverging history is printed. Most histories reach the router in the same
/// process; a share of them go over `URLSessionTransport` to the router served on loopback.
@Suite("Convergence simulation", .serialized)
struct ConvergenceSimulationTests {
    /// Histories per run: `TANDEM_SIM_HISTORIES` (default 300; the soak runs thousands).
    static let histories = ProcessInfo.processInfo.environment["TANDEM_SIM_HISTORIES"].flatMap(Int.init) ?? 300

    /// Sends each request to the router under test.
    static func transport(_ client: any TestClientProtocol) -> MemoryTransport {
        MemoryTransport { request in
            var headers = HTTPFields()
            for (name, value) in request.headers { headers[HTTPField.Name(name)!] = value }
            return try await client.execute(
                uri: request.path, method: HTTPRequest.Method(rawValue: request.method)!, headers: headers,
                body: request.body.map { ByteBuffer(bytes: $0) }
            ) { response in
                TransportResponse(
                    status: Int(response.status.code),
                    headers: Dictionary(response.headers.map { ($0.name.canonicalName, $0.value) }, uniquingKeysWith: { a, _ in a }),
                    body: Data(response.body.readableBytesView))
            }
        }
    }

    /// The transport a history's replicas share: URLSession over loopback when the router is
    /// served live (`client.port`), else straight to the router in this process.
    static func wire(_ client: any TestClientProtocol) throws -> any Transport {
        guard let port = client.port else { return transport(client) }
        return try URLSessionTransport(baseURL: "http://127.0.0.1:\(port)", timeout: 30)
    }

    /// A bug planted in every replica, to show that the simulation catches it.
    enum Plant {
        case none, invertedStampComparison, ignoredDeleteRules, noSweepOnBootstrap
    }

    /// One history; `nil` when it converged, else what differs.
    static func history(
        seed: UInt64, client: any TestClientProtocol, token: String, planted: Plant, policies: Bool = false,
        updateWinsOverDelete: Bool = true, compact: (@Sendable () async throws -> Void)? = nil,
        tune: (inout SyncConfiguration) -> Void = { _ in }
    ) async throws -> String? {
        var random = SplitMix64(seed: seed)
        func pick(_ count: Int) -> Int { Int(random.next() % UInt64(count)) }
        let dataset = "sim-\(seed)"
        let base = try wire(client)
        // With compaction, a fourth replica joins late (its first sync after step 20), and
        // replicas that sync rarely find their cursors expired.
        let count = compact == nil ? 3 : 4
        let replicas = try (0..<count).map { _ in try SyncFixtures.memoryStore(dataset) }
        let transports = (0..<count).map {
            FaultyTransport(
                wrapping: base, seed: seed &+ UInt64($0) &* 7919,
                faults: .init(drop: 0.08, cutAfterCommit: 0.08, duplicate: 0.08, delay: 0.05, maxDelay: .milliseconds(2)))
        }
        var configuration = SyncConfiguration(token: { token })
        if policies {
            configuration.conflictPolicies = ["Todo.title": .serverWins, "Todo.rank": .clientWins]
            if updateWinsOverDelete { configuration.updateWinsOverDelete = ["Todo"] }
        }
        tune(&configuration)
        let engines = (0..<count).map {
            SyncEngine(
                container: replicas[$0], transport: transports[$0], configuration: configuration,
                logger: Logger(label: "sim", factory: { _ in SwiftLogNoOpLogHandler() }))
        }
        for engine in engines {
            switch planted {
            case .none: break
            case .invertedStampComparison: await engine.plant(remoteWins: { $0 < $1 })
            case .ignoredDeleteRules: await engine.plantIgnoredDeleteRules()
            case .noSweepOnBootstrap: await engine.plantNoSweep()
            }
        }
        var log: [String] = []
        for step in 0..<40 {
            if let compact, pick(2) == 0 {
                try await compact()
                log.append("compact")
            }
            let r = pick(step < 20 ? 3 : count)
            let store = replicas[r]
            let n = 1 + pick(5)
            let exists = try store.read { db in try Bool.fetchOne(db, sql: "SELECT 1 FROM Todo WHERE \"#id\" = ?", arguments: [SyncFixtures.id(n)]) ?? false }
            let p = 100 + pick(2)
            let projectExists = try store.read { db in try Bool.fetchOne(db, sql: "SELECT 1 FROM Project WHERE \"#id\" = ?", arguments: [SyncFixtures.id(p)]) ?? false }
            switch pick(9) {
            case 0, 1:
                if exists {
                    try SyncFixtures.update(store, n, "title", "t\(step)"); log.append("r\(r) title \(n)=t\(step)")
                } else {
                    try SyncFixtures.insert(store, n, title: "t\(step)", rank: step); log.append("r\(r) insert \(n)")
                }
            case 2:
                if exists { try SyncFixtures.update(store, n, "rank", step); log.append("r\(r) rank \(n)=\(step)") }
            case 3:
                if exists { try SyncFixtures.delete(store, n); log.append("r\(r) delete \(n)") }
            case 4:
                if !projectExists { try SyncFixtures.insertProject(store, p, name: "p\(step)"); log.append("r\(r) insert project \(p)") }
            case 5:
                // A relationship edit: into a project this replica has, or out of any.
                if exists {
                    let target = projectExists ? p : nil
                    try SyncFixtures.move(store, n, to: target)
                    log.append("r\(r) move \(n) to \(target.map(String.init) ?? "none")")
                }
            case 6:
                if projectExists { try SyncFixtures.deleteProject(store, p); log.append("r\(r) delete project \(p) with its todos") }
            default:
                do { _ = try await engines[r].sync(); log.append("r\(r) sync") } catch let error as SyncError where error.isTransient {
                    log.append("r\(r) sync failed (\(error.message))")
                }
            }
        }
        for transport in transports { transport.isEnabled = false }
        for _ in 0..<3 { for engine in engines { _ = try await engine.sync() } }
        let fresh = try SyncFixtures.memoryStore(dataset)
        _ = try await SyncEngine(
            container: fresh, transport: base, configuration: SyncConfiguration(token: { token }),
            logger: Logger(label: "sim", factory: { _ in SwiftLogNoOpLogHandler() })
        ).sync()
        let states = try (replicas + [fresh]).map(SyncFixtures.state)
        // A todo never outlives its project (cascade), except one that `updateWinsOverDelete`
        // brought back: its reference then points nowhere, the same everywhere.
        let dangling = policies ? [] : try (replicas + [fresh]).flatMap(SyncFixtures.dangling)
        guard states.allSatisfy({ $0 == states[0] }), dangling.isEmpty else {
            if ProcessInfo.processInfo.environment["TANDEM_SIM_DEBUG"] != nil {
                let log = try await base.send(TransportRequest(method: "GET", path: "/v1/datasets/\(dataset)/pull?limit=1000", headers: ["Authorization": "Bearer \(token)"]))
                print(String(decoding: log.body, as: UTF8.self))
            }
            return "seed \(seed) diverged:\n" + states.enumerated().map { "  replica \($0.offset): \($0.element)" }.joined(separator: "\n")
                + (dangling.isEmpty ? "" : "\n  todos left in deleted projects: \(dangling)")
                + "\n  history: " + log.joined(separator: "; ")
        }
        return nil
    }

    static func run(
        seeds: [UInt64], planted: Plant, stopAtFirst: Bool, policies: Bool = false, updateWinsOverDelete: Bool = true,
        overURLSession: Bool = false, tune: @escaping @Sendable (inout SyncConfiguration) -> Void = { _ in }
    ) async throws -> [String] {
        try await histories(seeds: seeds, stopAtFirst: stopAtFirst, overURLSession: overURLSession) { seed, client, token in
            try await history(
                seed: seed, client: client, token: token, planted: planted, policies: policies,
                updateWinsOverDelete: updateWinsOverDelete, tune: tune)
        }
    }

    /// Runs `history` for each seed against one server router (in-memory storage, no rate
    /// limit); returns the failures it reported.
    static func histories(
        seeds: [UInt64], stopAtFirst: Bool, overURLSession: Bool = false,
        _ history: @escaping @Sendable (UInt64, any TestClientProtocol, String) async throws -> String?
    ) async throws -> [String] {
        try await histories(
            seeds: seeds, stopAtFirst: stopAtFirst, overURLSession: overURLSession,
            onStorage: { seed, client, token, _ in try await history(seed, client, token) })
    }

    /// ``histories(seeds:stopAtFirst:overURLSession:_:)`` whose histories also reach the storage
    /// (to compact it). `overURLSession` serves the router on loopback (Hummingbird's `.live`)
    /// and the replicas reach it with ``URLSessionTransport`` (see ``wire(_:)``).
    static func histories(
        seeds: [UInt64], stopAtFirst: Bool, overURLSession: Bool = false,
        onStorage history: @escaping @Sendable (UInt64, any TestClientProtocol, String, MemoryServerStorage) async throws -> String?
    ) async throws -> [String] {
        let storage = MemoryServerStorage()
        let user = try await storage.addUser(name: "sim", now: 0)
        let token = try await TokenIssuer.issue(for: user, in: storage)
        var configuration = ServerConfiguration()
        configuration.requestsPerSecond = 0
        let app = Application(
            router: buildRouter(ServerDependencies(storage: storage, configuration: configuration)),
            logger: Logger(label: "sim", factory: { _ in SwiftLogNoOpLogHandler() }))
        return try await app.test(overURLSession ? .live : .router) { client in
            var failures: [String] = []
            for seed in seeds {
                if let failure = try await history(seed, client, token, storage) {
                    failures.append(failure)
                    if stopAtFirst { break }
                }
            }
            return failures
        }
    }

    /// The histories' seeds: `TANDEM_SIM_SEED` when it is set (one history, to run a failure
    /// again), else `seed` of each of `count` numbers from `first`.
    static func seeds(_ count: Int, first: UInt64 = 1, _ seed: (UInt64) -> UInt64) -> [UInt64] {
        ProcessInfo.processInfo.environment["TANDEM_SIM_SEED"].flatMap(UInt64.init).map { [$0] } ?? (first..<first + UInt64(count)).map(seed)
    }

    @Test func replicasConvergeUnderRandomEditsSyncOrdersAndFaults() async throws {
        let seeds = Self.seeds(Self.histories) { $0 &* 0x9E37_79B9 }
        let failures = try await Self.run(seeds: seeds, planted: .none, stopAtFirst: false)
        #expect(failures.isEmpty, "\(failures.count) of \(Self.histories) histories diverged; the first:\n\(failures.first ?? "")")
    }

    /// The same with conflict policies on every replica (server wins for titles, client wins
    /// for ranks, updates win over deletes): decisions become new edits, and still converge.
    @Test func replicasConvergeWithConflictPolicies() async throws {
        let count = max(Self.histories / 3, 50)
        let failures = try await Self.run(seeds: (1...UInt64(count)).map { $0 &* 0x5851_F42D }, planted: .none, stopAtFirst: false, policies: true)
        #expect(failures.isEmpty, "\(failures.count) of \(count) histories diverged; the first:\n\(failures.first ?? "")")
    }

    /// Column policies without `updateWinsOverDelete`: the sync pulls first, and a pulled
    /// delete wins over local edits.
    @Test func replicasConvergeWithColumnPoliciesOnly() async throws {
        let count = max(Self.histories / 6, 50)
        let failures = try await Self.run(
            seeds: (1...UInt64(count)).map { $0 &* 0x2545_F491 }, planted: .none, stopAtFirst: false,
            policies: true, updateWinsOverDelete: false)
        #expect(failures.isEmpty, "\(failures.count) of \(count) histories diverged; the first:\n\(failures.first ?? "")")
    }

    /// Pushes of one change each, three in flight: their answers come back in any order, and
    /// a store skips its own log entries only along an unbroken chain of them.
    @Test func replicasConvergeWithSeveralPushesInFlight() async throws {
        let count = max(Self.histories / 6, 50)
        let failures = try await Self.run(seeds: (1...UInt64(count)).map { $0 &* 0x1656_67B1 }, planted: .none, stopAtFirst: false) {
            $0.pushBatchSize = 1
            $0.pushesInFlight = 3
        }
        #expect(failures.isEmpty, "\(failures.count) of \(count) histories diverged; the first:\n\(failures.first ?? "")")
    }

    /// Histories with compaction steps (the server keeps the last two entries of the log
    /// and prunes tombstones older than its previous step) and a late joiner: replicas whose
    /// cursors expired bootstrap again over their records, with their unpushed edits.
    static func runCompacting(seeds: [UInt64], planted: Plant, stopAtFirst: Bool, overURLSession: Bool = false) async throws -> [String] {
        try await histories(seeds: seeds, stopAtFirst: stopAtFirst, overURLSession: overURLSession) { seed, client, token, storage in
            let failure = try await history(seed: seed, client: client, token: token, planted: planted) {
                // Time passes between steps: deletes stamped before the last step's mark
                // lose their tombstones.
                try await Task.sleep(for: .milliseconds(3))
                try await storage.compact(policy: CompactionPolicy(keepEntries: 2), now: Int64(Date().timeIntervalSince1970 * 1000), maxClockSkew: 0)
            }
            if failure != nil, ProcessInfo.processInfo.environment["TANDEM_SIM_DEBUG"] != nil, let id = try await storage.compactionStates().last?.dataset {
                for record in await storage.records(dataset: id, after: "", limit: 1000).records { print("server", record.uri.suffix(3), record.state) }
            }
            return failure
        }
    }

    @Test func replicasConvergeWithCompactionAndLateJoiners() async throws {
        let count = max(Self.histories / 2, 50)
        let failures = try await Self.runCompacting(seeds: Self.seeds(count) { $0 &* 0x27D4_EB2F }, planted: .none, stopAtFirst: false)
        #expect(failures.isEmpty, "\(failures.count) of \(count) histories diverged; the first:\n\(failures.first ?? "")")
    }

    /// A share of the histories over a real HTTP exchange: `URLSessionTransport` (the apps'
    /// transport) to the router served on loopback, with the same faults around it, and with
    /// compaction and late joiners.
    @Test func replicasConvergeOverURLSession() async throws {
        let count = max(Self.histories / 6, 30)
        var failures = try await Self.run(seeds: Self.seeds(count) { $0 &* 0x6A09_E667 }, planted: .none, stopAtFirst: false, overURLSession: true)
        failures += try await Self.runCompacting(seeds: Self.seeds(count / 2) { $0 &* 0xBB67_AE85 }, planted: .none, stopAtFirst: false, overURLSession: true)
        #expect(failures.isEmpty, "\(failures.count) of \(count + count / 2) histories diverged; the first:\n\(failures.first ?? "")")
    }

    /// Over URLSession too, the simulation notices a planted inverted stamp comparison.
    @Test func theSimulationOverURLSessionCatchesAPlantedInvertedStampComparison() async throws {
        let failures = try await Self.run(seeds: (1...200).map { UInt64($0) &* 0x6A09_E667 }, planted: .invertedStampComparison, stopAtFirst: true, overURLSession: true)
        #expect(!failures.isEmpty, "an inverted stamp comparison went unnoticed")
    }

    /// A bootstrap over a store's records that keeps those the snapshot lacks (deleted
    /// elsewhere, their tombstones pruned) leaves them on that replica only.
    @Test func theSimulationCatchesAPlantedBootstrapThatNeverSweeps() async throws {
        let failures = try await Self.runCompacting(seeds: (1...300).map { UInt64($0) &* 0x27D4_EB2F }, planted: .noSweepOnBootstrap, stopAtFirst: true)
        #expect(!failures.isEmpty, "a bootstrap that never sweeps went unnoticed")
    }

    @Test func theSimulationCatchesAPlantedInvertedStampComparison() async throws {
        let failures = try await Self.run(seeds: (1...200).map { UInt64($0) &* 0x9E37_79B9 }, planted: .invertedStampComparison, stopAtFirst: true)
        #expect(!failures.isEmpty, "an inverted stamp comparison went unnoticed")
    }

    /// Relationship edits are in the simulation: a pull that ignores delete rules leaves
    /// todos in projects deleted elsewhere, and the harness notices.
    @Test func theSimulationCatchesAPlantedPullThatIgnoresDeleteRules() async throws {
        let failures = try await Self.run(seeds: (1...300).map { UInt64($0) &* 0x9E37_79B9 }, planted: .ignoredDeleteRules, stopAtFirst: true)
        #expect(failures.first?.contains("todos left in deleted projects") == true, "a pull ignoring delete rules went unnoticed")
    }
}

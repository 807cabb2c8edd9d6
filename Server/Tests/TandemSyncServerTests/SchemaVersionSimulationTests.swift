import Foundation
import GRDB
import HummingbirdTesting
import Logging
import Testing
import Tandem
import TandemSchema
@testable import TandemSync
import TandemSyncTestSupport
import TandemWire

/// The convergence simulation with replicas on different schema versions (those of
/// ``SchemaEvolutionProcessTests``: an attribute and an entity added and an attribute renamed
/// in version 2, an enum case added in version 3), over a fault-injecting transport: random
/// edits of what each version has, syncs, and upgrades of a replica to the next version at
/// random steps (its store file opened with the newer schema). Every replica ends with every
/// value its version can show; then every replica upgrades to version 3 and all of them, and
/// a fresh replica, hold every value written last.
@Suite("Convergence simulation: replicas on three schema versions", .serialized)
struct SchemaVersionSimulationTests {
    /// Histories per run: a tenth of `TANDEM_SIM_HISTORIES` (default 300), at least 20.
    static let histories = max(ConvergenceSimulationTests.histories / 10, 20)

    enum Plant { case none, dropUnknownValues }

    static func history(seed: UInt64, client: any TestClientProtocol, token: String, planted: Plant) async throws -> String? {
        var random = SplitMix64(seed: seed)
        func pick(_ count: Int) -> Int { Int(random.next() % UInt64(count)) }
        let dataset = "versions-\(seed)"
        let directory = FileManager.default.temporaryDirectory.appending(path: "tandem-versions-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let base = ConvergenceSimulationTests.transport(client)
        let quiet = Logger(label: "sim", factory: { _ in SwiftLogNoOpLogHandler() })
        let transports = (0..<3).map {
            FaultyTransport(
                wrapping: base, seed: seed &+ UInt64($0) &* 7919,
                faults: .init(drop: 0.05, cutAfterCommit: 0.05, duplicate: 0.05, delay: 0.05, maxDelay: .milliseconds(2)))
        }
        var versions = [1, 2, 3]
        let urls = (0..<3).map { directory.appending(path: "r\($0).store") }
        func open(_ r: Int) throws -> ModelContainer {
            try ModelContainer(schema: SchemaEvolutionProcessTests.schema(versions[r]), configuration: ModelConfiguration(url: urls[r], dataset: dataset))
        }
        func engine(_ r: Int, _ store: ModelContainer, _ transport: any Transport) async -> SyncEngine {
            let engine = SyncEngine(container: store, transport: transport, configuration: SyncConfiguration(token: { token }), logger: quiet)
            if planted == .dropUnknownValues { await engine.plantDroppingUnknownValues() }
            return engine
        }
        var stores = try (0..<3).map(open)
        var engines: [SyncEngine] = []
        for r in 0..<3 { engines.append(await engine(r, stores[r], transports[r])) }
        // Each version registered in release order.
        for r in 0..<3 { _ = try await engine(r, stores[r], base).sync() }
        var oracle = SchemaEvolutionProcessTests.Oracle()
        var log: [String] = []
        var next = 1
        func sync(_ r: Int) async {
            do { _ = try await engines[r].sync(); log.append("r\(r) sync") } catch { log.append("r\(r) sync failed") }
        }
        for step in 0..<40 {
            let r = pick(3)
            let version = versions[r]
            let edits: [SchemaEvolutionProcessTests.Edit] = [.insertTodo, .insertTodo, .title, .title, .note, .kind, .insertTag, .delete]
            switch pick(12) {
            case let index where index < edits.count:
                if let made = try SchemaEvolutionProcessTests.make(edits[index], on: stores[r], version: version, step: step, random: &random, oracle: &oracle, next: &next) {
                    log.append("r\(r) v\(version) \(made)")
                }
            case 8 where version < 3 && pick(3) == 0:
                // The app updates: the store migrates to the next version.
                versions[r] += 1
                stores[r] = try open(r)
                engines[r] = await engine(r, stores[r], transports[r])
                log.append("r\(r) upgrades to v\(versions[r])")
            default:
                await sync(r)
            }
            // Stamps follow real time: each write is the last one when it is made.
            try await Task.sleep(for: .milliseconds(2))
        }
        for transport in transports { transport.isEnabled = false }
        var problems: [String] = []
        for _ in 0..<2 { for r in 0..<3 { await sync(r) } }
        for r in 0..<3 {
            problems += try SchemaEvolutionProcessTests.differences(stores[r], version: versions[r], oracle).map { "r\(r): \($0)" }
        }
        // Every app updates: each store shows every value, the ones it kept included.
        for r in 0..<3 where versions[r] < 3 {
            versions[r] = 3
            stores[r] = try open(r)
            engines[r] = await engine(r, stores[r], base)
        }
        for r in 0..<3 { await sync(r) }
        let fresh = try ModelContainer(
            schema: SchemaEvolutionProcessTests.schema(3), configuration: ModelConfiguration(url: directory.appending(path: "fresh.store"), dataset: dataset))
        _ = try? await engine(3, fresh, base).sync()
        for (index, store) in (stores + [fresh]).enumerated() {
            problems += try SchemaEvolutionProcessTests.differences(store, version: 3, oracle).map { "after the upgrade, replica \(index): \($0)" }
        }
        guard problems.isEmpty else {
            return "seed \(seed): " + problems.joined(separator: "\n") + "\n  history: " + log.joined(separator: "; ")
        }
        return nil
    }

    static func run(seeds: [UInt64], planted: Plant, stopAtFirst: Bool) async throws -> [String] {
        try await ConvergenceSimulationTests.histories(seeds: seeds, stopAtFirst: stopAtFirst) { seed, client, token in
            try await history(seed: seed, client: client, token: token, planted: planted)
        }
    }

    @Test func replicasOnThreeSchemaVersionsConvergeOnWhatEachCanShowAndLoseNothingWhenTheyUpgrade() async throws {
        let seeds = ConvergenceSimulationTests.seeds(Self.histories, first: RichSimulationTests.first) { $0 &* 0x3C6E_F372 }
        let failures = try await Self.run(seeds: seeds, planted: .none, stopAtFirst: false)
        #expect(failures.isEmpty, "\(failures.count) of \(seeds.count) histories failed; the first:\n\(failures.first ?? "")")
    }

    @Test func theSimulationCatchesAPlantedLossOfValuesTheSchemaCannotShow() async throws {
        let failures = try await Self.run(seeds: (1...20).map { UInt64($0) &* 0x3C6E_F372 }, planted: .dropUnknownValues, stopAtFirst: true)
        #expect(!failures.isEmpty, "values an old replica could not show, dropped, went unnoticed")
    }
}

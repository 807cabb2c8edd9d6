import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOConcurrencyHelpers
import NIOCore
import Testing
import TandemServer
import TandemServerPostgres
@testable import TandemSync

/// The convergence simulation's histories through two server nodes on one PostgreSQL
/// database: each request of every replica goes to the next node in turn, so a retry, the
/// pull after a push and an echo's cursor cross nodes all the time.
@Suite("Convergence simulation through two nodes on PostgreSQL", .serialized)
struct PostgresSimulationTests {
    /// Histories: a share of the simulation's (`TANDEM_PG_SIM_HISTORIES`, default 40).
    static let histories = ProcessInfo.processInfo.environment["TANDEM_PG_SIM_HISTORIES"].flatMap(Int.init) ?? 40

    /// Sends each request to the next of `nodes`, in turn.
    struct AlternatingClient: TestClientProtocol {
        let nodes: [any TestClientProtocol]
        let next = NIOLockedValueBox(0)
        var port: Int? { nil }

        func executeRequest(uri: String, method: HTTPRequest.Method, headers: HTTPFields, body: ByteBuffer?) async throws -> TestResponse {
            let index = next.withLockedValue { count in
                defer { count += 1 }
                return count % nodes.count
            }
            return try await nodes[index].executeRequest(uri: uri, method: method, headers: headers, body: body)
        }
    }

    static func node(_ url: String, label: String) async throws -> (PostgresServerStorage, Application<RouterResponder<TandemRequestContext>>) {
        let storage = try await PostgresServerStorage(url: PostgresURL(url), maxConnections: 4, leaseDeadline: .seconds(60), operationDeadline: .seconds(180), logger: Logger(label: label))
        var configuration = ServerConfiguration()
        configuration.requestsPerSecond = 0
        let app = Application(
            router: buildRouter(ServerDependencies(storage: storage, configuration: configuration)),
            logger: Logger(label: label, factory: { _ in SwiftLogNoOpLogHandler() }))
        return (storage, app)
    }

    /// Runs `body` with two nodes on a new database of the run's cluster, a client that
    /// alternates between them, and a user's token; `nil` without a cluster.
    static func withTwoNodes<T: Sendable>(
        _ body: @escaping @Sendable (AlternatingClient, String, PostgresServerStorage, PostgresServerStorage) async throws -> T
    ) async throws -> T? {
        guard let cluster = StorageCopyProcessTests.postgres else {
            #expect(ProcessInfo.processInfo.environment["TANDEM_TEST_REQUIRE_POSTGRES"] != "1", "TANDEM_TEST_POSTGRES_URL is not set")
            return nil
        }
        let url = try await SyncServerProcess.offThread { try StorageCopyProcessTests.newDatabase(cluster) }
        let (one, appOne) = try await Self.node(url, label: "node-1")
        let (two, appTwo) = try await Self.node(url, label: "node-2")
        defer {
            one.close()
            two.close()
        }
        let token = try await TokenIssuer.issue(for: try await one.addUser(name: "sim", now: 0), in: two)
        return try await appOne.test(.router) { first in
            try await appTwo.test(.router) { second in
                try await body(AlternatingClient(nodes: [first, second]), token, one, two)
            }
        }
    }

    @Test func replicasConvergeThroughTwoNodesOnPostgres() async throws {
        let seeds = ConvergenceSimulationTests.seeds(Self.histories) { $0 &* 0x9E37_79B9 &+ 17 }
        _ = try await Self.withTwoNodes { client, token, one, two in
            var failures: [String] = []
            for seed in seeds {
                if let failure = try await ConvergenceSimulationTests.history(seed: seed, client: client, token: token, planted: .none) {
                    failures.append(failure)
                }
            }
            #expect(failures.isEmpty, "\(failures.count) of \(seeds.count) histories diverged; the first:\n\(failures.first ?? "")")
            // Both nodes served: each holds the same log for one of the datasets.
            let dataset = try #require(try await one.datasetID(owner: 1, name: "sim-\(seeds[0])"))
            let (headOne, headTwo) = (try await one.logHead(dataset: dataset), try await two.logHead(dataset: dataset))
            #expect(headOne > 0 && headOne == headTwo)
        }
    }

    /// The same simulation catches a bug planted in the replicas when it runs on PostgreSQL.
    @Test func theSimulationOnPostgresCatchesAPlantedBug() async throws {
        let caught = try await Self.withTwoNodes { client, token, _, _ in
            for seed in (1...UInt64(40)).map({ $0 &* 0x9E37_79B9 }) {
                if try await ConvergenceSimulationTests.history(seed: seed, client: client, token: token, planted: .invertedStampComparison) != nil {
                    return true
                }
            }
            return false
        }
        #expect(caught != false)
    }
}

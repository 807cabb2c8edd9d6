import Foundation
import Logging
import PostgresNIO
import Testing
import TandemServerPostgres

/// The PostgreSQL cluster `Scripts/test.sh` started for this run (`TANDEM_TEST_POSTGRES_URL`,
/// a URL of its `postgres` database): each test gets a new database of its own.
enum PostgresTestCluster {
    /// How long a storage in this process waits for a connection: longer than a server's
    /// 5 s, as tests here that block their threads (processes, sleeps) can starve the tasks
    /// that make connections while the whole suite runs on 2 cores.
    static let leaseDeadline: Duration = .seconds(60)
    /// How long one operation may take in all: longer than a server's 20 s for the same
    /// reason (a run under load saw migrations of a new database pass 20 s).
    static let operationDeadline: Duration = .seconds(180)

    static let url = ProcessInfo.processInfo.environment["TANDEM_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }

    /// One client for the `CREATE DATABASE`s, running for the whole test process.
    private static let admin: PostgresClient? = {
        guard let url, let parsed = try? PostgresURL(url) else { return nil }
        var configuration = parsed.configuration
        configuration.options.maximumConnections = 2
        let client = PostgresClient(configuration: configuration, backgroundLogger: Logger(label: "test-postgres-admin"))
        Task { await client.run() }
        return client
    }()

    /// A new empty schema of the run's database, as a URL whose connections use it
    /// (`search_path`): a schema is made at once, where a `CREATE DATABASE` copies a template
    /// (about 7 MB of WAL each, for a hundred storages per run).
    static func newDatabase() async throws -> PostgresURL {
        guard let url, let admin else { throw StorageErrorForTests("TANDEM_TEST_POSTGRES_URL is not set") }
        let name = "tandem_test_\(UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: ""))"
        try await admin.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA \(name)"))
        var parsed = try PostgresURL(url)
        parsed.configuration.options.additionalStartupParameters.append(("search_path", name))
        return parsed
    }

    /// A new empty database, as the URL text `tandem-server --database` takes (for server
    /// processes).
    static func newDatabaseURL() async throws -> String {
        guard let url, let admin else { throw StorageErrorForTests("TANDEM_TEST_POSTGRES_URL is not set") }
        let name = "tandem_test_\(UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: ""))"
        try await admin.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"))
        var parts = URLComponents(string: url)!
        parts.path = "/\(name)"
        return parts.string!
    }
}

struct StorageErrorForTests: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

@Suite struct PostgresClusterTests {
    /// `Scripts/test.sh` sets `TANDEM_TEST_REQUIRE_POSTGRES=1`: a run of the suite there
    /// without the cluster would leave every PostgreSQL case out and still pass.
    @Test func postgresIsThereWhenRequired() {
        if ProcessInfo.processInfo.environment["TANDEM_TEST_REQUIRE_POSTGRES"] == "1" {
            #expect(PostgresTestCluster.url != nil, "TANDEM_TEST_REQUIRE_POSTGRES=1 but TANDEM_TEST_POSTGRES_URL is not set")
            #expect(StorageKind.allCases.contains(.postgres))
        }
    }
}

import Foundation
import Logging
import PostgresNIO
import Testing
import TandemServer
import TandemServerPostgres

/// TLS to PostgreSQL as the URL asks for it, against the run's cluster (Scripts/postgres.sh
/// turns TLS on with a self-signed certificate).
@Suite("PostgreSQL over TLS", .enabled(if: PostgresTestCluster.url != nil))
struct PostgresTLSTests {
    /// The run's cluster URL with `sslmode` set to `mode`, its connections on a new schema.
    static func url(sslmode mode: String) async throws -> PostgresURL {
        let base = try #require(PostgresTestCluster.url)
        let schema = try await PostgresTestCluster.newDatabase()  // makes the schema
        let name = try #require(schema.configuration.options.additionalStartupParameters.first { $0.0 == "search_path" }?.1)
        var parsed = try PostgresURL(base.replacingOccurrences(of: "sslmode=disable", with: "sslmode=\(mode)"))
        parsed.configuration.options.additionalStartupParameters.append(("search_path", name))
        return parsed
    }

    @Test func aURLAskingForTLSIsServedOverAnEncryptedConnection() async throws {
        let url = try await Self.url(sslmode: "require")
        let storage = try await PostgresServerStorage(
            url: url, maxConnections: 2, leaseDeadline: PostgresTestCluster.leaseDeadline, operationDeadline: PostgresTestCluster.operationDeadline, logger: Logger(label: "tls"))
        defer { storage.close() }
        _ = try await storage.addUser(name: "ann", now: 0)
        #expect(try await storage.user(named: "ann") != nil, "the storage works over TLS")
        // The same configuration, asked whether its connection is encrypted.
        let client = PostgresClient(configuration: url.configuration, backgroundLogger: Logger(label: "tls"))
        let runner = Task { await client.run() }
        defer { runner.cancel() }
        let encrypted = try await client.query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").collect().first?.decode(Bool.self)
        #expect(encrypted == true)
    }

    /// `verify-full` checks the certificate: the cluster's is self-signed, so it is refused
    /// with an error, not used unchecked.
    @Test func verifyFullRefusesACertificateNobodySigned() async throws {
        let url = try await Self.url(sslmode: "verify-full")
        await #expect(throws: StorageError.self) {
            let storage = try await PostgresServerStorage(url: url, maxConnections: 1, leaseDeadline: .seconds(3), logger: Logger(label: "tls"))
            storage.close()
        }
    }
}

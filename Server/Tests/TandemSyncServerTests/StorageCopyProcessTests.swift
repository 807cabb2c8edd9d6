import Foundation
import Testing
import Tandem
import TandemCurl
@testable import TandemSync
import TandemSyncTestSupport

/// `tandem-server storage copy`: a SQLite deployment moved to PostgreSQL keeps its clients'
/// cursors, and the SQLite data left behind can never make a client skip changes.
@Suite("Moving a deployment to PostgreSQL", .serialized)
struct StorageCopyProcessTests {
    static let postgres = ProcessInfo.processInfo.environment["TANDEM_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }

    /// Runs a program; its status and what it wrote (standard output and error).
    static func run(_ executable: URL, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// A new empty database of the run's cluster (psql), as a URL.
    static func newDatabase(_ cluster: String) throws -> String {
        let name = "tandem_copy_\(UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: ""))"
        let made = try run(URL(filePath: "/usr/bin/psql"), [cluster, "-q", "-c", "CREATE DATABASE \(name)"])
        try #require(made.status == 0, "psql: \(made.output)")
        var parts = try #require(URLComponents(string: cluster))
        parts.path = "/\(name)"
        return try #require(parts.string)
    }

    static func engine(_ store: ModelContainer, _ server: SyncServerProcess) throws -> SyncEngine {
        SyncEngine(container: store, transport: try CurlTransport(baseURL: server.base), configuration: SyncConfiguration(token: { server.token }))
    }

    @Test func aSQLiteDeploymentCopiedToPostgresKeepsItsClientsCursors() async throws {
        guard let cluster = Self.postgres else {
            #expect(ProcessInfo.processInfo.environment["TANDEM_TEST_REQUIRE_POSTGRES"] != "1", "TANDEM_TEST_POSTGRES_URL is not set")
            return
        }
        let executable = try #require(SyncServerProcess.executable)
        let server = try await SyncServerProcess.make()
        let (a, b) = (try SyncFixtures.store(), try SyncFixtures.store())
        let (syncA, syncB) = (try Self.engine(a, server), try Self.engine(b, server))
        for n in 1...30 { try SyncFixtures.insert(a, n, title: "a\(n)", rank: n) }
        try SyncFixtures.update(a, 3, "title", "edited")
        try SyncFixtures.delete(a, 4)
        _ = try await syncA.sync()
        _ = try await syncB.sync()
        let database = try await SyncServerProcess.offThread { try Self.newDatabase(cluster) }
        let dataDir = server.dataDir.path(percentEncoded: false)
        let copy = ["storage", "copy", "--from-data-dir", dataDir, "--to", database]

        let whileServing = try await SyncServerProcess.offThread { try Self.run(executable, copy) }
        #expect(whileServing.status != 0 && whileServing.output.contains("stop it first"), "\(whileServing.output)")
        await server.stopped()
        let copied = try await SyncServerProcess.offThread { try Self.run(executable, copy) }
        #expect(copied.status == 0, "\(copied.output)")
        #expect(copied.output.contains("users: 1 rows") && copied.output.contains("log: 31 rows"), "\(copied.output)")
        let again = try await SyncServerProcess.offThread { try Self.run(executable, copy) }
        #expect(again.status == 0 && again.output.contains("already holds this copy"), "\(again.output)")

        // The same clients, the same cursors, now through PostgreSQL: no resync.
        server.database = database
        try await server.started()
        try SyncFixtures.insert(b, 31, title: "after the move")
        let fromB = try await syncB.sync()
        let fromA = try await syncA.sync()
        #expect(!fromB.resynced && !fromA.resynced, "the cursors stay valid")
        let beside = try await SyncServerProcess.offThread { try Self.run(executable, ["storage", "new-epoch", "--database", database]) }
        #expect(beside.status != 0 && beside.output.contains("stop every node first"), "\(beside.output)")
        #expect(fromA.pulled == 1, "A pulls only what is new")
        #expect(try SyncFixtures.rows(a) == SyncFixtures.rows(b) && SyncFixtures.rows(a).count == 30)
        let c = try SyncFixtures.store()
        _ = try await Self.engine(c, server).sync()
        #expect(try SyncFixtures.rows(c) == SyncFixtures.rows(a), "a new store reads it all from PostgreSQL")

        // The SQLite data served again by mistake: its clients resync, they never skip.
        await server.stopped()
        server.database = nil
        try await server.started()
        let back = try await syncA.sync()
        #expect(back.resynced, "the copied-away data is of another epoch")
        #expect(try SyncFixtures.rows(a).count == 30)
        await server.stopped()

        // A copy into a database that holds other data is refused, and changes nothing.
        let refused = try await SyncServerProcess.offThread { try Self.run(executable, copy) }
        #expect(refused.status != 0 && refused.output.contains("copy into an empty database"), "\(refused.output)")
        server.database = database
        try await server.started()
        let d = try SyncFixtures.store()
        _ = try await Self.engine(d, server).sync()
        #expect(try SyncFixtures.rows(d) == SyncFixtures.rows(c), "the PostgreSQL data is as it was")
        let beforeRestore = try await Self.engine(d, server).sync()
        #expect(!beforeRestore.resynced)

        // The PostgreSQL database restored into another one (as pg_dump and pg_restore, or
        // CREATE DATABASE … TEMPLATE, make it: another OID): its clients resync.
        await server.stopped()
        let name = try #require(URLComponents(string: database)?.path.dropFirst())
        let restored = try await SyncServerProcess.offThread { try Self.run(URL(filePath: "/usr/bin/psql"), [cluster, "-q", "-c", "CREATE DATABASE \(name)_restored TEMPLATE \(name)"]) }
        #expect(restored.status == 0, "\(restored.output)")
        server.database = database.replacingOccurrences(of: "/\(name)", with: "/\(name)_restored")
        try await server.started()
        let afterRestore = try await Self.engine(d, server).sync()
        #expect(afterRestore.resynced, "a restored PostgreSQL database is of a new epoch")
        #expect(try SyncFixtures.rows(d) == SyncFixtures.rows(c))
        await server.stopped()
    }
}

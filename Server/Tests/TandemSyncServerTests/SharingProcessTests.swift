import Foundation
import GRDB
import Tandem
import TandemCurl
import TandemSync
import TandemSyncTestSupport
import Testing

/// A dataset shared through a real `tandem-server` with the operator's commands: the
/// member's store syncs `ann/todos` under the dataset's own name, both replicas converge, and
/// a removed member's next sync is refused while its replica keeps what it holds.
@Suite("Sharing a dataset (the processes)", .serialized)
struct SharingProcessTests {
    @Test func aMembersReplicaConvergesWithTheOwnersUntilItIsRemoved() async throws {
        let server = try await SyncServerProcess.make()
        let executable = try #require(SyncServerProcess.executable)
        let dir = server.dataDir.path(percentEncoded: false)
        try SyncServerProcess.run(executable, ["users", "add", "bob", "--data-dir", dir])
        let bobToken = try SyncServerProcess.run(executable, ["tokens", "create", "bob", "--data-dir", dir]).trimmingCharacters(in: .whitespacesAndNewlines)
        let (ann, bob) = (try SyncFixtures.store(), try SyncFixtures.store())
        func engine(_ store: ModelContainer, dataset: String?, token: String) throws -> SyncEngine {
            SyncEngine(container: store, transport: try CurlTransport(baseURL: server.base), configuration: SyncConfiguration(dataset: dataset, token: { token }))
        }
        try SyncFixtures.insert(ann, 1, title: "ann's")
        _ = try await engine(ann, dataset: nil, token: server.token).sync()

        // Not shared yet: refused, nothing pulled.
        await #expect(throws: SyncError.self) { try await engine(bob, dataset: "ann/todos", token: bobToken).sync() }
        #expect(try SyncFixtures.rows(bob).isEmpty)
        let shared = try SyncServerProcess.run(executable, ["datasets", "share", "ann/todos", "--with", "bob", "--role", "writer", "--data-dir", dir])
        #expect(shared.contains("bob is a writer of ann/todos"), "\(shared)")
        #expect(try SyncServerProcess.run(executable, ["datasets", "members", "ann/todos", "--data-dir", dir]) == "ann\towner\nbob\twriter\n")

        try SyncFixtures.insert(bob, 2, title: "bob's")
        #expect(try await engine(bob, dataset: "ann/todos", token: bobToken).sync().isComplete)
        _ = try await engine(ann, dataset: nil, token: server.token).sync()
        #expect(try SyncFixtures.rows(ann) == SyncFixtures.rows(bob))
        #expect(try SyncFixtures.rows(ann).count == 2)

        // A reader's local edit cannot be pushed: it waits in the quarantine, and the pull
        // goes on.
        _ = try SyncServerProcess.run(executable, ["datasets", "share", "ann/todos", "--with", "bob", "--role", "reader", "--data-dir", dir])
        try SyncFixtures.insert(bob, 4, title: "a reader's")
        try SyncFixtures.insert(ann, 5, title: "ann's second")
        _ = try await engine(ann, dataset: nil, token: server.token).sync()
        let asReader = try await engine(bob, dataset: "ann/todos", token: bobToken).sync()
        #expect(asReader.quarantined == 1, "\(asReader)")
        #expect(try SyncFixtures.rows(bob)[SyncFixtures.id(5)] != nil, "the pull went on")
        #expect(try SyncFixtures.rows(ann)[SyncFixtures.id(4)] == nil)

        // A store of another dataset name cannot sync it: its URIs would differ.
        let other = try SyncFixtures.store(dataset: "groceries")
        let misnamed = await #expect(throws: SyncError.self) { try await engine(other, dataset: "ann/todos", token: bobToken).sync() }
        #expect(misnamed?.code == .misconfigured)

        try SyncServerProcess.run(executable, ["datasets", "unshare", "ann/todos", "--with", "bob", "--data-dir", dir])
        try SyncFixtures.insert(ann, 3, title: "after the removal")
        _ = try await engine(ann, dataset: nil, token: server.token).sync()
        let refused = await #expect(throws: SyncError.self) { try await engine(bob, dataset: "ann/todos", token: bobToken).sync() }
        #expect(refused?.message.contains("not a member") == true, "\(refused?.message ?? "")")
        #expect(try SyncFixtures.rows(bob)[SyncFixtures.id(3)] == nil, "nothing new arrives")
        #expect(try SyncFixtures.rows(bob).count == 4, "what the replica holds stays")
    }
}

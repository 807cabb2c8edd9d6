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

        // A reader's resync pulls only: the store's records (the server's) are neither pushed
        // back nor quarantined; the reader's own edit still waits, alone.
        let resynced = try await engine(bob, dataset: "ann/todos", token: bobToken).resync()
        #expect(resynced.resynced && resynced.resyncPushRefused, "\(resynced)")
        #expect(resynced.description.contains("by pulling only"), "said, not silent: \(resynced)")
        let afterResync = try SyncStatus(of: bob)
        #expect(afterResync.quarantined == 1, "only the reader's own edit: \(afterResync)")
        #expect(afterResync.pendingChanges == 1, "\(afterResync)")
        #expect(try SyncFixtures.rows(bob).filter { $0.key != SyncFixtures.id(4) } == SyncFixtures.rows(ann))

        // A store of another dataset name cannot sync it: its URIs would differ.
        let other = try SyncFixtures.store(dataset: "groceries")
        let misnamed = await #expect(throws: SyncError.self) { try await engine(other, dataset: "ann/todos", token: bobToken).sync() }
        #expect(misnamed?.code == .misconfigured)

        try SyncServerProcess.run(executable, ["datasets", "unshare", "ann/todos", "--with", "bob", "--data-dir", dir])
        try SyncFixtures.insert(ann, 3, title: "after the removal")
        _ = try await engine(ann, dataset: nil, token: server.token).sync()
        let refused = await #expect(throws: SyncError.self) { try await engine(bob, dataset: "ann/todos", token: bobToken).sync() }
        #expect(refused?.message.contains("is shared with you") == true, "\(refused?.message ?? "")")
        #expect(try SyncFixtures.rows(bob)[SyncFixtures.id(3)] == nil, "nothing new arrives")
        #expect(try SyncFixtures.rows(bob).count == 4, "what the replica holds stays")
    }

    @Test func anOperatorScopesTokensListsUsersAndDeletesADataset() async throws {
        let server = try await SyncServerProcess.make()
        let executable = try #require(SyncServerProcess.executable)
        let dir = server.dataDir.path(percentEncoded: false)
        func tool(_ arguments: String...) throws -> (status: Int32, output: String, error: String) {
            try SyncServerProcess.invoke(executable, arguments + ["--data-dir", dir])
        }
        let ann = try SyncFixtures.store()
        try SyncFixtures.insert(ann, 1, title: "ann's")
        let annEngine = SyncEngine(container: ann, transport: try CurlTransport(baseURL: server.base), configuration: SyncConfiguration(token: { server.token }))
        _ = try await annEngine.sync()
        _ = try tool("users", "add", "bob")
        _ = try tool("users", "add", "carol")
        _ = try tool("datasets", "share", "ann/todos", "--with", "bob", "--role", "writer")

        // Refused scopes say what to fix.
        let stranger = try tool("tokens", "create", "carol", "--dataset", "ann/todos")
        #expect(stranger.status != 0 && stranger.error.contains("not a member"), "\(stranger)")
        let missing = try tool("tokens", "create", "bob", "--dataset", "ann/nothing")
        #expect(missing.status != 0 && missing.error.contains("has no dataset 'nothing'"), "\(missing)")
        let badLifetime = try tool("tokens", "create", "bob", "--expires", "5x")
        #expect(badLifetime.status != 0 && badLifetime.error.contains("--expires"), "\(badLifetime)")

        // A read-only token of a writer pulls everything and pushes nothing.
        let created = try tool("tokens", "create", "bob", "--dataset", "ann/todos", "--read-only", "--expires", "12h")
        #expect(created.status == 0, "\(created)")
        let readOnly = created.output.trimmingCharacters(in: .whitespacesAndNewlines)
        let bob = try SyncFixtures.store()
        try SyncFixtures.insert(bob, 2, title: "bob's")
        let bobEngine = SyncEngine(
            container: bob, transport: try CurlTransport(baseURL: server.base), configuration: SyncConfiguration(dataset: "ann/todos", token: { readOnly }))
        let result = try await bobEngine.sync()
        #expect(result.quarantined == 1, "\(result)")
        #expect(try SyncFixtures.rows(bob)[SyncFixtures.id(1)] != nil, "the pull went on")
        _ = try await annEngine.sync()
        #expect(try SyncFixtures.rows(ann)[SyncFixtures.id(2)] == nil, "nothing pushed")

        let tokens = try tool("tokens", "list")
        let line = try #require(tokens.output.split(separator: "\n").first { $0.hasPrefix(String(readOnly.dropFirst(4).prefix(12))) })
        #expect(line.contains("\tbob\t") && line.contains("ann/todos") && line.contains("read-only") && line.hasSuffix("live"), "\(line)")
        #expect(!tokens.output.contains(String(readOnly.suffix(64))), "never a secret")
        let users = try tool("users", "list").output.split(separator: "\n").map { $0.split(separator: "\t").prefix(5).joined(separator: " ") }
        #expect(
            Array(users.dropFirst()) == ["ann \(users[1].split(separator: " ")[1]) 1 0 1", "bob \(users[2].split(separator: " ")[1]) 0 1 1", "carol \(users[3].split(separator: " ")[1]) 0 0 0"],
            "\(users)")

        // The owner of datasets is not removed by mistake.
        let owner = try tool("users", "remove", "ann")
        #expect(owner.status != 0 && owner.error.contains("--delete-datasets"), "\(owner)")

        // Deleted: gone for every member; their replica keeps what it holds.
        let deleted = try tool("datasets", "delete", "ann/todos")
        #expect(deleted.status == 0 && deleted.output.contains("dataset ann/todos deleted"), "\(deleted)")
        let gone = await #expect(throws: SyncError.self) { try await bobEngine.sync() }
        #expect(gone?.status == 404, "\(String(describing: gone))")
        #expect(try SyncFixtures.rows(bob)[SyncFixtures.id(1)] != nil)

        // The owner's next sync makes a new dataset of the name and pushes its store into it.
        // A running engine (a daemon's) hears of the deletion once, then starts again.
        let ownersGone = await #expect(throws: SyncError.self) { try await annEngine.sync() }
        #expect(ownersGone?.status == 404, "\(String(describing: ownersGone))")
        let again = try await annEngine.sync()
        #expect(again.isComplete && again.resynced && !again.resyncPushRefused, "\(again)")
        let fresh = try SyncFixtures.store()
        _ = try await SyncEngine(container: fresh, transport: try CurlTransport(baseURL: server.base), configuration: SyncConfiguration(token: { server.token })).sync()
        #expect(try SyncFixtures.rows(fresh) == SyncFixtures.rows(ann), "the new dataset holds the owner's store")

        // A removed user's tokens stop at once.
        #expect(try tool("users", "remove", "bob").status == 0)
        let removed = await #expect(throws: SyncError.self) { try await bobEngine.sync() }
        #expect(removed?.status == 401, "\(String(describing: removed))")
        #expect(!(try tool("tokens", "list").output.contains("\tbob\t")))
    }
}

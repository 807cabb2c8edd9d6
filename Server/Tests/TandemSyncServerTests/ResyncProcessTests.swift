import Foundation
import Tandem
import TandemCurl
import TandemSync
import TandemSyncTestSupport
import Testing

/// `tandem resync`: a replica starts again with a server without being wiped. Here the store
/// moves to another server (whose answer to its old cursor is `cursor_other_dataset`: the
/// sync stops rather than pushing into a dataset it does not know), is resynced into it by
/// the CLI, and a newer value the server holds is not overwritten by the resync's older one.
@Suite("tandem resync (the processes)", .serialized)
struct ResyncProcessTests {
    @Test func aStoreMovedToAnotherServerStopsThenResyncsIntoItKeepingNewerValues() async throws {
        let first = try await SyncServerProcess.make()
        let second = try await SyncServerProcess.make()
        func engine(_ store: ModelContainer, _ server: SyncServerProcess) throws -> SyncEngine {
            SyncEngine(container: store, transport: try CurlTransport(baseURL: server.base), configuration: SyncConfiguration(token: { server.token }))
        }
        let (url, store) = try DaemonProcessTests.storeFile()
        for n in 1...5 { try SyncFixtures.insert(store, n, title: "todo \(n)") }
        #expect(try await engine(store, first).sync().isComplete)

        // Another server: the old cursor is another dataset's, and the sync stops.
        let stopped = await #expect(throws: SyncError.self) { try await engine(store, second).sync() }
        #expect(stopped?.serverCode == "cursor_other_dataset", "\(String(describing: stopped))")

        // Someone else's newer value for record 1 is on the second server already.
        let other = try SyncFixtures.store()
        try SyncFixtures.insert(other, 1, title: "newer, elsewhere")
        #expect(try await engine(other, second).sync().isComplete)

        let tandem = try #require(DaemonProcessTests.tandem)
        let tokenFile = FileManager.default.temporaryDirectory.appending(path: "resync-\(UUID().uuidString).token")
        try second.token.write(to: tokenFile, atomically: true, encoding: .utf8)
        let resynced = try SyncServerProcess.invoke(
            tandem,
            ["resync", "--store", url.path(percentEncoded: false), "--server", second.base, "--token-file", tokenFile.path(percentEncoded: false)])
        #expect(resynced.status == 0 && resynced.output.hasPrefix("synced"), "\(resynced)")

        let fresh = try SyncFixtures.store()
        #expect(try await engine(fresh, second).sync().isComplete)
        #expect(try SyncFixtures.rows(fresh) == SyncFixtures.rows(store), "the server holds the store's records")
        #expect(try SyncFixtures.rows(fresh).count == 5)
        #expect(try SyncFixtures.rows(store)[SyncFixtures.id(1)]?.contains("newer, elsewhere") == true, "the newer value stayed and came back")
        // And it syncs on with the second server from now on.
        try SyncFixtures.insert(store, 6, title: "after the move")
        #expect(try await engine(store, second).sync().pushed == 1)
    }

    /// A server URL with a path the server does not have (`…/v1`): a usage error (exit 2)
    /// that says what to check, not "the server refused" (exit 1) with a bare `http_error`.
    @Test func aServerURLWithAWrongPathIsAUsageErrorSayingWhatToCheck() async throws {
        let server = try await SyncServerProcess.make()
        let (url, store) = try DaemonProcessTests.storeFile()
        try SyncFixtures.insert(store, 1, title: "waits")
        let tandem = try #require(DaemonProcessTests.tandem)
        let tokenFile = FileManager.default.temporaryDirectory.appending(path: "path-\(UUID().uuidString).token")
        try server.token.write(to: tokenFile, atomically: true, encoding: .utf8)
        let run = try SyncServerProcess.invoke(
            tandem, ["sync", "--store", url.path(percentEncoded: false), "--server", server.base + "/v1", "--token-file", tokenFile.path(percentEncoded: false)])
        #expect(run.status == 2 && run.error.contains("Check the server's URL"), "\(run)")
        #expect(try SyncStatus.pendingChanges(of: store) == 1)
    }

    /// An edit, then a sync with another server by mistake: refused before the push, so the
    /// edit stays pending and the next sync with the right server takes it to the other
    /// replica. Before, the wrong server took the edit, the store counted it as pushed, and
    /// the two replicas of the right server diverged for good while every sync said
    /// "synced" (a hostile trial).
    @Test func anEditSyncedByMistakeWithAnotherServerStaysPendingAndReachesItsOwn() async throws {
        let right = try await SyncServerProcess.make()
        let wrong = try await SyncServerProcess.make()
        func engine(_ store: ModelContainer, _ server: SyncServerProcess) throws -> SyncEngine {
            SyncEngine(container: store, transport: try CurlTransport(baseURL: server.base), configuration: SyncConfiguration(token: { server.token }))
        }
        let a = try SyncFixtures.store(), b = try SyncFixtures.store()
        try SyncFixtures.insert(a, 1, title: "v1")
        #expect(try await engine(a, right).sync().isComplete)
        #expect(try await engine(b, right).sync().isComplete)
        try SyncFixtures.update(a, 1, "title", "v2")
        let stopped = await #expect(throws: SyncError.self) { try await engine(a, wrong).sync() }
        #expect(stopped?.serverCode == "cursor_other_dataset", "\(String(describing: stopped))")
        #expect(try SyncStatus.pendingChanges(of: a) == 1, "the edit is still to push")
        let onWrong = try SyncFixtures.store()
        #expect(try await engine(onWrong, wrong).sync().isComplete)
        #expect(try SyncFixtures.rows(onWrong).isEmpty, "the wrong server took nothing")
        #expect(try await engine(a, right).sync().pushed == 1)
        #expect(try await engine(b, right).sync().isComplete)
        #expect(try SyncFixtures.rows(a) == SyncFixtures.rows(b))
        #expect(try SyncFixtures.rows(b)[SyncFixtures.id(1)]?.contains("v2") == true)
    }
}

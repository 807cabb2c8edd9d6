import Foundation
import GRDB
import Tandem
import TandemCurl
@testable import TandemSync
import TandemSyncTestSupport
import Testing

/// Joining from a snapshot and coming back after compaction, with the real processes: a
/// `tandem-server` on its SQLite default, libcurl, `tandem sync` and
/// `tandem-server storage compact`.
@Suite("Snapshot bootstrap and compaction (the processes)", .serialized)
struct BootstrapProcessTests {
    static func engine(_ store: ModelContainer, _ server: SyncServerProcess) throws -> SyncEngine {
        SyncEngine(container: store, transport: try CurlTransport(baseURL: server.base), configuration: SyncConfiguration(token: { server.token }))
    }

    /// `count` todos in one save.
    static func fill(_ store: ModelContainer, _ count: Int) throws {
        try store.write(author: "app") { db in
            let statement = try db.makeStatement(sql: "INSERT INTO Todo (\"#id\", title, rank) VALUES (?, ?, ?)")
            for n in 1...count { try statement.execute(arguments: [SyncFixtures.id(n), "todo \(n)", n]) }
        }
    }

    /// History changes journaled value by value (a bootstrap writes markers only).
    static func journaledChanges(_ store: ModelContainer) throws -> Int {
        try store.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM tandem_history_change")! }
    }

    static func tokenFile(_ server: SyncServerProcess) throws -> String {
        let url = FileManager.default.temporaryDirectory.appending(path: "bootstrap-\(UUID().uuidString).token")
        try server.token.write(to: url, atomically: true, encoding: .utf8)
        return url.path(percentEncoded: false)
    }

    @Test func aBootstrapKilledMidwayResumesAndEndsEqualWithNothingTwice() async throws {
        let server = try await SyncServerProcess.make()
        let source = try SyncFixtures.store()
        try Self.fill(source, 40_000)
        for n in stride(from: 1, through: 40_000, by: 97) { try SyncFixtures.update(source, n, "title", "edited \(n)") }
        #expect(try await Self.engine(source, server).sync().isComplete)
        // Small snapshot pages: many chances to be cut between two.
        await server.stopped()
        server.extraArguments = ["--max-page-size", "400"]
        try await server.started()

        let tandem = try #require(DaemonProcessTests.tandem)
        let (url, store) = try DaemonProcessTests.storeFile()
        let path = url.path(percentEncoded: false)
        let arguments = ["sync", "--store", path, "--server", server.base, "--token-file", try Self.tokenFile(server)]
        let child = Process()
        child.executableURL = tandem
        child.arguments = arguments
        child.standardOutput = FileHandle.nullDevice
        child.standardError = FileHandle.nullDevice
        try child.run()
        // Killed once some pages are in and the bootstrap is not over.
        var killedMidway = false
        for _ in 0..<2_000 {
            let state = try? store.read { db in
                try Row.fetchOne(db, sql: "SELECT bootstrap_mode, bootstrap FROM tandem_sync_state").map { (mode: $0[0] as Int, token: $0[1] as String) }
            }
            let rows = (try? store.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM Todo") }) ?? 0
            if let state, state.mode != 0, !state.token.isEmpty, (rows ?? 0) >= 2_000 {
                kill(child.processIdentifier, SIGKILL)
                killedMidway = true
                break
            }
            if !child.isRunning { break }
            try await Task.sleep(for: .milliseconds(2))
        }
        child.waitUntilExit()
        try #require(killedMidway, "the bootstrap ended before it could be killed: make the dataset larger")
        let cut = try store.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM Todo")! }
        #expect(cut > 0 && cut < 40_000, "killed with \(cut) records in")

        let resumed = try SyncServerProcess.invoke(tandem, arguments)
        #expect(resumed.status == 0 && resumed.output.hasPrefix("synced"), "\(resumed)")
        #expect(try SyncFixtures.rows(store) == SyncFixtures.rows(source))
        #expect(try store.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM Todo")! } == 40_000, "nothing twice")
        #expect(try Self.journaledChanges(store) == 0, "the pages are journaled as markers")
        let markers = try store.fetchHistory(HistoryDescriptor())
        #expect(!markers.isEmpty && markers.allSatisfy { $0.author == "sync" && $0.contextName == "snapshot" && $0.changes.isEmpty })
        // It syncs on from the snapshot's position: a later edit arrives by the log.
        try SyncFixtures.update(source, 7, "title", "after the bootstrap")
        _ = try await Self.engine(source, server).sync()
        _ = try await Self.engine(store, server).sync()
        #expect(try SyncFixtures.rows(store)[SyncFixtures.id(7)]?.first == "after the bootstrap")
    }

    @Test func aReplicaOfflineAcrossTheHorizonKeepsItsEditsAndADeletedRecordStaysDeleted() async throws {
        let server = try await SyncServerProcess.make()
        let a = try SyncFixtures.store(), b = try SyncFixtures.store(), e = try SyncFixtures.store()
        for n in 1...5 { try SyncFixtures.insert(a, n, title: "todo \(n)", rank: n) }
        #expect(try await Self.engine(a, server).sync().isComplete)
        #expect(try await Self.engine(b, server).sync().isComplete)
        #expect(try await Self.engine(e, server).sync().isComplete)

        // B, offline: edits record 1 and record 2, and makes record 8.
        try SyncFixtures.update(b, 1, "title", "B's edit")
        try SyncFixtures.update(b, 2, "title", "B's edit of a record deleted elsewhere")
        try SyncFixtures.insert(b, 8, title: "made offline")
        // Meanwhile A deletes record 2 and edits record 3; the server compacts its log past
        // all of it, tombstones included.
        try SyncFixtures.delete(a, 2)
        try SyncFixtures.delete(a, 4)  // nobody edits it again
        try SyncFixtures.update(a, 3, "title", "A's edit")
        #expect(try await Self.engine(a, server).sync().isComplete)
        let serverBinary = try #require(SyncServerProcess.executable)
        let compact = ["storage", "compact", "--data-dir", server.dataDir.path(percentEncoded: false), "--log-retention", "forever", "--log-retention-entries", "1", "--max-clock-skew", "0"]
        #expect(try SyncServerProcess.invoke(serverBinary, compact).status == 0)
        try await Task.sleep(for: .milliseconds(20))
        try SyncFixtures.insert(a, 6, title: "todo 6")
        #expect(try await Self.engine(a, server).sync().isComplete)
        let second = try SyncServerProcess.invoke(serverBinary, compact)
        #expect(second.status == 0 && second.output.contains("pruned 2 tombstone"), "\(second)")

        // B comes back: its edits go first, then its expired cursor bootstraps it again.
        let summary = try await Self.engine(b, server).sync()
        #expect(summary.isComplete)
        #expect(try await Self.engine(a, server).sync().isComplete)
        let rowsA = try SyncFixtures.rows(a), rowsB = try SyncFixtures.rows(b)
        #expect(rowsA == rowsB)
        #expect(rowsB[SyncFixtures.id(1)]?.first == "B's edit", "B's edit is on the server")
        #expect(rowsB[SyncFixtures.id(8)]?.first == "made offline")
        #expect(rowsB[SyncFixtures.id(3)]?.first == "A's edit", "A's edit reached B")
        #expect(rowsB[SyncFixtures.id(2)] == nil, "the record deleted elsewhere stays deleted")
        let conflicts = try SyncStatus.conflicts(of: b)
        #expect(
            conflicts.contains { $0.record.hasSuffix(SyncFixtures.id(2)) && $0.localValue?.contains("deleted elsewhere") == true },
            "B's lost edit is in its conflict log: \(conflicts)")
        // A fresh replica bootstraps to the same.
        let c = try SyncFixtures.store()
        #expect(try await Self.engine(c, server).sync().isComplete)
        #expect(try SyncFixtures.rows(c) == rowsA)
        // A replica that slept through it all, still holding record 2, resyncs on request: it
        // pushes every record again, and record 2 (made before the tombstone horizon) is not
        // brought back, there or anywhere (found by a hostile trial: it was).
        #expect(try await Self.engine(e, server).resync().isComplete)
        #expect(try await Self.engine(a, server).sync().isComplete)
        #expect(try SyncFixtures.rows(e) == SyncFixtures.rows(a))
        #expect(try SyncFixtures.rows(a)[SyncFixtures.id(2)] == nil, "the record deleted long ago stays deleted")
        #expect(try SyncFixtures.rows(a)[SyncFixtures.id(4)] == nil, "and so does one nobody touched since its tombstone was pruned")
    }
}

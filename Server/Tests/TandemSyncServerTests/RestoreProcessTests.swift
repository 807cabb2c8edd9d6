import Foundation
import GRDB
import Testing
import Tandem
import TandemCurl
@testable import TandemSync
import TandemSyncTestSupport

/// A real server whose SQLite file is put back from a backup while stores keep syncing with
/// it: no store may skip the changes written after the restore at positions it had already
/// seen, and nothing the stores pushed after the backup may be lost.
@Suite("A server restored from a backup", .serialized)
struct RestoreProcessTests {
    static func engine(_ store: ModelContainer, _ server: SyncServerProcess) throws -> SyncEngine {
        SyncEngine(container: store, transport: try CurlTransport(baseURL: server.base), configuration: SyncConfiguration(token: { server.token }))
    }

    /// The server's files (`tandem.sqlite` and its WAL, when any), copied from `from` to `to`;
    /// `inPlace`: written over the existing files, as `cp` does (same inode, same birth time).
    static func copyDatabase(from: URL, to: URL, inPlace: Bool = false) throws {
        try FileManager.default.createDirectory(at: to, withIntermediateDirectories: true)
        try? FileManager.default.removeItem(at: to.appending(path: "tandem.sqlite-shm"))
        for name in ["tandem.sqlite", "tandem.sqlite-wal"] {
            let target = to.appending(path: name)
            let source = from.appending(path: name)
            guard FileManager.default.fileExists(atPath: source.path) else {
                try? FileManager.default.removeItem(at: target)
                continue
            }
            if inPlace, FileManager.default.fileExists(atPath: target.path) {
                try Data(contentsOf: source).write(to: target)
            } else {
                try? FileManager.default.removeItem(at: target)
                try FileManager.default.copyItem(at: source, to: target)
            }
        }
    }

    @Test func storesOfAServerRestoredFromABackupResyncAndLoseNothing() async throws {
        let server = try await SyncServerProcess.make()
        let (a, b) = (try SyncFixtures.store(), try SyncFixtures.store())
        let (syncA, syncB) = (try Self.engine(a, server), try Self.engine(b, server))
        for n in 1...3 { try SyncFixtures.insert(a, n, title: "a\(n)") }
        _ = try await syncA.sync()
        _ = try await syncB.sync()
        #expect(try SyncFixtures.rows(b).count == 3)

        // The backup: the stopped server's files.
        let backup = FileManager.default.temporaryDirectory.appending(path: "tandem-backup-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: backup) }
        await server.stopped()
        try Self.copyDatabase(from: server.dataDir, to: backup)
        try await server.started()

        // Changes the backup lacks: both stores have them, then the backup is put back.
        try SyncFixtures.update(a, 1, "title", "edited after the backup")
        try SyncFixtures.insert(a, 4, title: "made after the backup")
        _ = try await syncA.sync()
        _ = try await syncB.sync()
        #expect(try SyncFixtures.rows(b) == SyncFixtures.rows(a))
        await server.stopped()
        try Self.copyDatabase(from: backup, to: server.dataDir, inPlace: true)  // cp over the file
        try await server.started()

        // B writes at positions A's cursor has passed already.
        try SyncFixtures.insert(b, 5, title: "made after the restore")
        try SyncFixtures.update(b, 2, "title", "edited after the restore")
        let first = try await syncB.sync()
        let second = try await syncA.sync()
        #expect(first.resynced && second.resynced, "both stores found their cursors of the history before the restore")
        let third = try await syncB.sync()
        #expect(!third.resynced && third.isComplete)

        let rowsA = try SyncFixtures.rows(a)
        #expect(rowsA == (try SyncFixtures.rows(b)), "the stores converge")
        #expect(rowsA[SyncFixtures.id(1)]?.first == "edited after the backup", "A's edit the restore lost is back")
        #expect(rowsA[SyncFixtures.id(4)] != nil, "the record the restore lost is back")
        #expect(rowsA[SyncFixtures.id(5)] != nil, "A got B's record written after the restore, at a position it had seen before")
        #expect(rowsA[SyncFixtures.id(2)]?.first == "edited after the restore")
        // Replaying the log from the start meets values this store's later edits replaced:
        // logged as conflicts again (the store cannot tell them from edits it never saw),
        // each with the value it holds as the winner.
        for store in [a, b] {
            let winners = try store.read { db in
                try Row.fetchAll(db, sql: "SELECT record, winner, local_value, remote_value FROM tandem_sync_conflict WHERE attribute = 'title'")
            }
            for row in winners {
                let id = String((row["record"] as String).split(separator: "/").last!)
                let won: String = row["winner"] == "local" ? row["local_value"] : row["remote_value"]
                #expect(won == "\"\(rowsA[id]?.first ?? "")\"", "a logged conflict's winner is the value held")
            }
        }

        // A store that never synced before reads the same from the server.
        let c = try SyncFixtures.store()
        _ = try await Self.engine(c, server).sync()
        #expect(try SyncFixtures.rows(c) == rowsA, "the server holds everything again")
    }

    /// Values a store keeps for a newer schema are part of what it holds: when the server is
    /// restored from a backup that lacks them and the newer app's device is gone, the resync
    /// pushes them again, and a new replica of the newer version gets them.
    @Test func valuesKeptForANewerSchemaArePushedAgainByAResync() async throws {
        let server = try await SyncServerProcess.make()
        let directory = FileManager.default.temporaryDirectory.appending(path: "tandem-restore-kept-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func store(_ version: Int, _ name: String) throws -> ModelContainer {
            try ModelContainer(schema: SchemaEvolutionProcessTests.schema(version), configuration: ModelConfiguration(url: directory.appending(path: name), dataset: "todos"))
        }
        let (old, newer) = (try store(1, "old.store"), try store(3, "newer.store"))
        try old.write(author: "app") { db in try db.execute(sql: "INSERT INTO Todo (\"#id\", title, kind) VALUES (?, 'first', 0)", arguments: [SyncFixtures.id(1)]) }
        _ = try await Self.engine(old, server).sync()
        _ = try await Self.engine(newer, server).sync()
        let backup = directory.appending(path: "backup")
        await server.stopped()
        try Self.copyDatabase(from: server.dataDir, to: backup)
        try await server.started()

        // The newer app writes what the old one cannot show, and its device is then lost.
        try newer.write(author: "app") { db in
            try db.execute(sql: "UPDATE Todo SET note = 'keep me', kind = 2")
            try db.execute(sql: "INSERT INTO Tag (\"#id\", name) VALUES (?, 'tagged')", arguments: [SyncFixtures.id(2)])
        }
        _ = try await Self.engine(newer, server).sync()
        let kept = try await Self.engine(old, server).sync()
        #expect(kept.keptForNewerSchema >= 3, "\(kept)")
        await server.stopped()
        try Self.copyDatabase(from: backup, to: server.dataDir, inPlace: true)
        try await server.started()

        let resync = try await Self.engine(old, server).sync()
        #expect(resync.resynced && resync.isComplete, "\(resync)")
        let replacement = try store(3, "replacement.store")
        _ = try await Self.engine(replacement, server).sync()
        let row = try replacement.read { db in try Row.fetchOne(db, sql: "SELECT note, kind FROM Todo") }
        #expect(row?["note"] == "keep me" && row?["kind"] == 2, "\(String(describing: row))")
        #expect(try replacement.read { db in try String.fetchAll(db, sql: "SELECT name FROM Tag") } == ["tagged"])
    }

    /// A resync cut off midway (the server gone) goes on at the next sync, with nothing lost.
    @Test func aResyncCutOffGoesOnAtTheNextSync() async throws {
        let server = try await SyncServerProcess.make()
        let a = try SyncFixtures.store()
        let syncA = try Self.engine(a, server)
        for n in 1...2 { try SyncFixtures.insert(a, n, title: "a\(n)") }
        _ = try await syncA.sync()
        let backup = FileManager.default.temporaryDirectory.appending(path: "tandem-backup-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: backup) }
        await server.stopped()
        try Self.copyDatabase(from: server.dataDir, to: backup)
        try await server.started()
        for n in 3...40 { try SyncFixtures.insert(a, n, title: "a\(n)") }
        _ = try await syncA.sync()
        await server.stopped()
        try Self.copyDatabase(from: backup, to: server.dataDir)
        try await server.started()
        // The resync starts (its id saved, the cursor cleared), then the server goes away.
        try await syncA.store { db in
            try SyncState.update(db) {
                $0.cursor = ""
                $0.snapshotPushed = false
                $0.resync = "cut"
            }
        }
        await server.stopped()
        await #expect(throws: SyncError.self) { try await syncA.sync() }
        #expect(try await syncA.read { db in try SyncState.read(db)?.resync } == "cut", "the resync waits for the next sync")
        try await server.started()
        let summary = try await syncA.sync()
        #expect(summary.isComplete)
        #expect(try await syncA.read { db in try SyncState.read(db)?.resync } == "")
        let b = try SyncFixtures.store()
        _ = try await Self.engine(b, server).sync()
        #expect(try SyncFixtures.rows(b) == (try SyncFixtures.rows(a)) && SyncFixtures.rows(b).count == 40)
    }
}

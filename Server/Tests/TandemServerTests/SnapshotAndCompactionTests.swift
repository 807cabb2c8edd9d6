import Foundation
import HTTPTypes
import Testing
import TandemConflicts
import TandemSchema
@testable import TandemServer
import TandemWire

/// Snapshots (`GET …/snapshot`) and log compaction on every storage: what a snapshot holds,
/// how its pages resume, what compaction deletes and keeps, and what a client whose cursor
/// compaction passed is told.
@Suite("Snapshots and log compaction")
struct SnapshotAndCompactionTests {
    static let base: UInt64 = 1_800_000_000_000

    /// ann's `todos` with records 1…`count` (titles `t1`…), record 2 then updated and 3 deleted.
    static func filled(_ client: ServerHarness.Client, _ harness: ServerHarness, count: Int = 6) async throws {
        try await client.setUp("todos", token: harness.ann)
        for n in 1...count {
            let stamp = ServerHarness.stamp(base + UInt64(n))
            let reply = try await client.push(
                "todos", token: harness.ann, key: "i\(n)", PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("todos", n, title: "t\(n)", at: stamp)]))
            #expect(reply.status == .ok, "\(String(decoding: reply.body, as: UTF8.self))")
        }
        let update = WireChange(
            record: ServerHarness.uri("todos", 2), entity: "Todo", kind: .update, values: ["title": .text("two")],
            stamps: ["title": ServerHarness.stamp(base + 100)])
        let delete = WireChange(record: ServerHarness.uri("todos", 3), entity: "Todo", kind: .delete, stamps: ["*": ServerHarness.stamp(base + 101)])
        #expect(try await client.push("todos", token: harness.ann, key: "u", PushRequest(schemaVersion: 1, changes: [update, delete])).status == .ok)
    }

    /// Every page of the snapshot, with `limit` records a page.
    static func snapshot(_ client: ServerHarness.Client, token: String, limit: Int) async throws -> [PullResponse] {
        var pages: [PullResponse] = []
        var after = ""
        while true {
            let reply = try await client.send(.get, "/v1/datasets/todos/snapshot?after=\(after)&limit=\(limit)", token: token)
            #expect(reply.status == .ok, "\(String(decoding: reply.body, as: UTF8.self))")
            let page = try reply.decode(PullResponse.self)
            pages.append(page)
            if !page.hasMore { return pages }
            after = page.nextCursor
        }
    }

    @Test(arguments: StorageKind.allCases)
    func aSnapshotHoldsEachRecordOnceInURIOrderWithItsStampsAndEndsAtTheLogsCursor(kind: StorageKind) async throws {
        let harness = try await ServerHarness.make(kind)
        try await harness.run { client in
            try await Self.filled(client, harness)
            let pages = try await Self.snapshot(client, token: harness.ann, limit: 2)
            #expect(pages.count == 3)
            let changes = pages.flatMap(\.changes).map(\.change)
            #expect(changes.map(\.record) == (1...6).map { ServerHarness.uri("todos", $0) }, "each record once, in URI order")
            #expect(changes[1].kind == .insert && changes[1].values["title"] == .text("two"), "the newest value")
            #expect(changes[1].stamps["title"] == ServerHarness.stamp(Self.base + 100) && changes[1].stamps["*"] == ServerHarness.stamp(Self.base + 2))
            #expect(changes[2].kind == .delete && changes[2].stamps["*"] == ServerHarness.stamp(Self.base + 101), "a tombstone still kept")
            // The last page's cursor is the log's head: pulling after it gets what came since.
            let head = pages.last!.nextCursor
            #expect(try await client.pull("todos", token: harness.ann, after: head, limit: 10).changes.isEmpty)
            _ = try await client.push(
                "todos", token: harness.ann, key: "later", PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("todos", 7, at: ServerHarness.stamp(Self.base + 200))]))
            #expect(try await client.pull("todos", token: harness.ann, after: head, limit: 10).changes.map(\.change.record) == [ServerHarness.uri("todos", 7)])
        }
    }

    @Test(arguments: StorageKind.allCases)
    func compactionKeepsTheNewestEntriesAndTellsAnOlderCursorItExpired(kind: StorageKind) async throws {
        let harness = try await ServerHarness.make(kind)
        try await harness.run { client in
            try await Self.filled(client, harness)
            let id = try #require(try await harness.storage.datasetID(owner: 1, name: "todos"))
            let bytes = try await harness.storage.storedBytes(owner: 1)
            let early = try await client.pull("todos", token: harness.ann, limit: 2).nextCursor
            let report = try await harness.storage.compact(policy: CompactionPolicy(keepEntries: 3), now: 0, maxClockSkew: 0, step: 2)
            #expect(report.entries == 5 && report.datasets == 1, "8 entries, 3 kept, deleted in steps of 2")
            let state = try await harness.storage.compaction(dataset: id)
            #expect(state.head == 8 && state.compactedThrough == 5)
            #expect(try await harness.storage.storedBytes(owner: 1) < bytes, "the entries' bytes leave the quota")
            for cursor in [early, ""] {
                let reply = try await client.send(.get, "/v1/datasets/todos/pull?after=\(cursor)", token: harness.ann)
                #expect(reply.status == .gone && reply.errorCode == "cursor_expired", "cursor '\(cursor)'")
            }
            // The snapshot still has everything; its cursor pulls on.
            let pages = try await Self.snapshot(client, token: harness.ann, limit: 100)
            #expect(pages.flatMap(\.changes).count == 6)
            #expect(try await client.send(.get, "/v1/datasets/todos/pull?after=\(pages.last!.nextCursor)", token: harness.ann).status == .ok)
            // Compaction never takes the head, whatever the policy.
            _ = try await harness.storage.compact(policy: CompactionPolicy(keepEntries: 1), now: 0, maxClockSkew: 0)
            _ = try await harness.storage.compact(policy: CompactionPolicy(keepEntries: 1), now: 0, maxClockSkew: 0)
            #expect(try await harness.storage.compaction(dataset: id).compactedThrough == 7)
            #expect(try await harness.storage.logHead(dataset: id) == 8)
        }
    }

    @Test(arguments: StorageKind.allCases)
    func aSnapshotPageTokenOlderThanTheCompactedLogExpiresAndABadOneIsRefused(kind: StorageKind) async throws {
        let harness = try await ServerHarness.make(kind)
        try await harness.run { client in
            try await Self.filled(client, harness)
            let first = try await client.send(.get, "/v1/datasets/todos/snapshot?limit=2", token: harness.ann).decode(PullResponse.self)
            #expect(first.hasMore && first.nextCursor.hasPrefix("s1."))
            for bad in ["nonsense", "s1.AAAA", "c3.AAAA"] {
                let reply = try await client.send(.get, "/v1/datasets/todos/snapshot?after=\(bad)", token: harness.ann)
                #expect(reply.status == .badRequest && reply.errorCode == "invalid_cursor", "\(bad)")
            }
            #expect(try await client.send(.get, "/v1/datasets/todos/snapshot?limit=0", token: harness.ann).errorCode == "invalid_limit")
            // More pushes, then compaction past the snapshot's position.
            for n in 10...13 {
                _ = try await client.push(
                    "todos", token: harness.ann, key: "m\(n)",
                    PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("todos", n, at: ServerHarness.stamp(Self.base + UInt64(n)))]))
            }
            _ = try await harness.storage.compact(policy: CompactionPolicy(keepEntries: 1), now: 0, maxClockSkew: 0)
            let reply = try await client.send(.get, "/v1/datasets/todos/snapshot?after=\(first.nextCursor)", token: harness.ann)
            #expect(reply.status == .gone && reply.errorCode == "cursor_expired")
            // Another dataset's token is refused as its cursor would be.
            try await client.setUp("other", token: harness.ann)
            let elsewhere = try await client.send(.get, "/v1/datasets/other/snapshot?after=\(first.nextCursor)", token: harness.ann)
            #expect(elsewhere.status == .conflict && elsewhere.errorCode == "cursor_other_dataset")
            #expect(try await client.send(.get, "/v1/datasets/todos/snapshot", token: harness.bob).errorCode == "not_found")
        }
    }

    @Test(arguments: StorageKind.allCases)
    func prunedTombstonesLeaveTheSnapshotAndALateUpdateOfSuchARecordLosesToItsDelete(kind: StorageKind) async throws {
        let harness = try await ServerHarness.make(kind)
        try await harness.run { client in
            try await Self.filled(client, harness)
            let id = try #require(try await harness.storage.datasetID(owner: 1, name: "todos"))
            // Two rounds: the first notes the head (a mark), the second dates the compacted log by it.
            _ = try await harness.storage.compact(policy: CompactionPolicy(keepEntries: 1), now: Int64(Self.base) + 1_000, maxClockSkew: 0)
            _ = try await client.push(
                "todos", token: harness.ann, key: "x",
                PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("todos", 9, at: ServerHarness.stamp(Self.base + 2_000))]))
            let report = try await harness.storage.compact(policy: CompactionPolicy(keepEntries: 1), now: Int64(Self.base) + 3_000, maxClockSkew: 0)
            #expect(report.tombstones == 1, "record 3's delete (stamped base+101) is older than the first mark")
            #expect(try await harness.storage.compaction(dataset: id).tombstonesBefore == Int64(Self.base) + 1_000)
            let changes = try await Self.snapshot(client, token: harness.ann, limit: 100).flatMap(\.changes).map(\.change)
            #expect(!changes.contains { $0.record == ServerHarness.uri("todos", 3) }, "the tombstone is gone")
            // A resync sends record 3 again (an insert made before the horizon): it loses to the
            // delete, logged again so every replica drops it, and is not made anew. A plain
            // insert made before the horizon, of a record never seen, is a new record.
            let resent = try await client.push(
                "todos", token: harness.ann, key: "resync",
                PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("todos", 3, title: "resent", at: ServerHarness.stamp(Self.base + 3))], resync: true))
            #expect(try resent.decode(PushResponse.self).outcomes.first?.lost.isEmpty == false, "\(String(decoding: resent.body, as: UTF8.self))")
            let offline = try await client.push(
                "todos", token: harness.ann, key: "offline",
                PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("todos", 30, title: "made offline", at: ServerHarness.stamp(Self.base + 70))]))
            #expect(try offline.decode(PushResponse.self).outcomes.first?.lost.isEmpty == true)
            // A replica offline since before the delete pushes an edit of record 3, and an
            // insert of it: both lose to the delete (logged lost).
            let late = WireChange(
                record: ServerHarness.uri("todos", 3), entity: "Todo", kind: .update, values: ["title": .text("late")],
                stamps: ["title": ServerHarness.stamp(Self.base + 50)])
            let reply = try await client.push("todos", token: harness.ann, key: "late", PushRequest(schemaVersion: 1, changes: [late]))
            let answer = try reply.decode(PushResponse.self)
            #expect(answer.outcomes.first?.lost.first?.attribute == "title", "\(String(decoding: reply.body, as: UTF8.self))")
            let again = try await client.push(
                "todos", token: harness.ann, key: "again",
                PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("todos", 3, title: "back", at: ServerHarness.stamp(Self.base + 60))]))
            #expect(try again.decode(PushResponse.self).outcomes.first?.lost.isEmpty == false)
            let after = try await Self.snapshot(client, token: harness.ann, limit: 100).flatMap(\.changes).map(\.change)
            #expect(after.first { $0.record == ServerHarness.uri("todos", 3) }?.kind == .delete, "never made anew")
            // A record made after the horizon is a new record, as ever.
            let fresh = try await client.push(
                "todos", token: harness.ann, key: "fresh",
                PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("todos", 20, at: ServerHarness.stamp(Self.base + 5_000))]))
            #expect(try fresh.decode(PushResponse.self).outcomes.first?.lost.isEmpty == true)
        }
    }

    /// Compaction lowers the bytes the datasets hold; the SQLite file reopened (a restart,
    /// `storage compact` with the server stopped) must not take that for a restore from an
    /// older copy. Found by a hostile trial: every client resynced after a compaction.
    @Test func aCompactedSQLiteFileReopenedKeepsItsEpoch() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "tandem-compact-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appending(path: "tandem.sqlite").path(percentEncoded: false)
        let storage = try SQLiteServerStorage(path: path)
        let token = try await TokenIssuer.issue(for: try await storage.addUser(name: "ann", now: 0), in: storage)
        let harness = ServerHarness(storage: storage, dependencies: ServerDependencies(storage: storage, configuration: ServerConfiguration(), now: { 1_800_000_000_000 }), ann: token, bob: token)
        try await harness.run { client in try await Self.filled(client, harness) }
        await storage.refreshMark()
        let bytes = try await storage.storedBytes(owner: 1)
        _ = try await storage.compact(policy: CompactionPolicy(keepEntries: 1), now: 0, maxClockSkew: 0)
        #expect(try await storage.storedBytes(owner: 1) < bytes)
        let reopened = try SQLiteServerStorage(path: path)
        #expect(reopened.epoch == storage.epoch && reopened.newEpochReason == nil, "\(reopened.newEpochReason ?? "")")
    }
}

import Foundation
import Testing
import TandemWire
@testable import TandemServer

/// When a storage's data starts a new epoch: only when it is found somewhere it was not
/// settled (a restore, a copy), never on a plain reopening.
@Suite("Storage epochs")
struct StorageEpochTests {
    @Test func dataFoundWhereItWasSettledKeepsItsEpoch() {
        let stored = StorageEpoch(value: 7, identity: "sqlite:1:2:3")
        let (epoch, reason) = StorageEpoch.settle(stored: stored, identity: "sqlite:1:2:3", newEpoch: { 9 })
        #expect(epoch == stored && reason == nil)
    }

    @Test func dataFoundSomewhereElseStartsANewEpoch() {
        let (epoch, reason) = StorageEpoch.settle(stored: StorageEpoch(value: 7, identity: "sqlite:1:2:3"), identity: "sqlite:1:2:4", newEpoch: { 9 })
        #expect(epoch == StorageEpoch(value: 9, identity: "sqlite:1:2:4") && reason?.contains("restored") == true)
        let (first, why) = StorageEpoch.settle(stored: nil, identity: "postgres:5", newEpoch: { 11 })
        #expect(first.value == 11 && why == "new data")
        #expect(StorageEpoch(bytes: first.bytes, identity: "x")?.value == 11 && StorageEpoch(bytes: [1, 2], identity: "x") == nil)
    }

    /// A SQLite file reopened keeps its epoch; the same file copied back over it (a restore
    /// from a backup, which may reuse the inode number) starts a new one.
    @Test func aSQLiteFileCopiedBackStartsANewEpochAndAReopenedOneDoesNot() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "tandem-epoch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appending(path: "tandem.sqlite").path(percentEncoded: false)
        let epoch = try SQLiteServerStorage(path: path).epoch
        let reopened = try SQLiteServerStorage(path: path)
        #expect(reopened.epoch == epoch && reopened.newEpochReason == nil)
        let backup = directory.appending(path: "backup.sqlite").path(percentEncoded: false)
        try FileManager.default.copyItem(atPath: path, toPath: backup)
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.copyItem(atPath: backup, toPath: path)
        let restored = try SQLiteServerStorage(path: path)
        #expect(restored.epoch != epoch && restored.newEpochReason != nil)
        #expect(try SQLiteServerStorage(path: path).epoch == restored.epoch, "settled again where it is now")
    }

    /// A backup written over the database in place (`cp backup tandem.sqlite`: the same
    /// inode and birth time) holds fewer bytes than the server had written: a new epoch.
    @Test func aSQLiteFileRewrittenInPlaceFromAnOlderCopyStartsANewEpoch() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "tandem-epoch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appending(path: "tandem.sqlite").path(percentEncoded: false)
        let backup = directory.appending(path: "backup.sqlite").path(percentEncoded: false)
        var epoch: UInt64 = 0
        do {
            let storage = try SQLiteServerStorage(path: path)
            let harness = try await StorageFormatTests.harness(storage, users: true)
            try await harness.run { client in try await client.setUp("todos", token: harness.ann) }
            try await storage.pool.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
            try FileManager.default.copyItem(atPath: path, toPath: backup)
            try await harness.run { client in
                let changes = [ServerHarness.insert("todos", 1)]
                let reply = try await client.push("todos", token: harness.ann, key: "k", PushRequest(schemaVersion: 1, changes: changes))
                #expect(reply.status == .ok)
            }
            try await storage.pool.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
            await storage.refreshMark()
            epoch = storage.epoch
        }
        let before = try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int
        try Data(contentsOf: URL(filePath: backup)).write(to: URL(filePath: path))  // in place, as cp over a file
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int == before, "the same file")
        let restored = try SQLiteServerStorage(path: path)
        #expect(restored.epoch != epoch && restored.newEpochReason?.contains("older copy") == true)
        #expect(try SQLiteServerStorage(path: path).epoch == restored.epoch, "one new epoch, not one per opening")
    }

    @Test func aMarkIsReadBackAndSaysWhenDataWentBack() {
        let mark = HighWaterMark(epoch: 0xabc, bytes: 500)
        #expect(HighWaterMark(text: mark.text) == mark && HighWaterMark(text: "junk") == nil)
        #expect(mark.restored(epoch: 0xabc, bytes: 500) == nil && mark.restored(epoch: 0xabc, bytes: 900) == nil)
        #expect(mark.restored(epoch: 0xabc, bytes: 499) != nil && mark.restored(epoch: 0xdef, bytes: 900) != nil)
    }
}

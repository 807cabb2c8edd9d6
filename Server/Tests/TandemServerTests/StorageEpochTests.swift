import Foundation
import Testing
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
}

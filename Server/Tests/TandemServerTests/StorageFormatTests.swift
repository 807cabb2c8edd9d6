import Foundation
import GRDB
import Testing
import TandemSchema
@testable import TandemServer
import TandemWire

/// The SQLite storage's file format moves forward in place and refuses what it cannot read.
@Suite("Server database format")
struct StorageFormatTests {
    static func path() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appending(path: "tandem-format-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appending(path: "tandem.sqlite").path(percentEncoded: false)
    }

    static func harness(_ storage: SQLiteServerStorage, users: Bool) async throws -> ServerHarness {
        let ann = users ? try await TokenIssuer.issue(for: try await storage.addUser(name: "ann", now: 0), in: storage)
                        : try await TokenIssuer.issue(for: try #require(try await storage.user(named: "ann")), in: storage)
        return ServerHarness(storage: storage, dependencies: ServerDependencies(storage: storage, now: { 1_800_000_000_000 }), ann: ann, bob: ann)
    }

    /// A format 1 database (record states as JSON) opens as format 2, and pushes merge with
    /// the JSON states it holds.
    @Test func aFormatOneDatabaseIsUpgradedAndItsJSONStatesStillMerge() async throws {
        let path = try Self.path()
        let first = try await Self.harness(try SQLiteServerStorage(path: path), users: true)
        let uri = ServerHarness.uri("todos", 1)
        try await first.run { client in
            try await client.setUp("todos", token: first.ann)
            _ = try await client.push("todos", token: first.ann, key: "k1", PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("todos", 1)]))
        }
        // Rewrite the record's state as a format 1 server wrote it, with a newer title.
        let newer = HLCTimestamp(physical: 1_800_000_000_500, counter: 0, node: 9)
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in
            let stored = try #require(try Data.fetchOne(db, sql: "SELECT state FROM records WHERE uri = ?", arguments: [uri]))
            var state = try RecordState(stored: stored)
            #expect(stored.first == RecordState.binaryFormat)
            state.fields["title"] = .init(value: .text("from a format 1 server"), stamp: newer)
            try db.execute(sql: "UPDATE records SET state = ? WHERE uri = ?", arguments: [state.jsonData(), uri])
            try db.execute(sql: "PRAGMA user_version = 1")
        }
        try await queue.close()

        let reopened = try SQLiteServerStorage(path: path)
        let second = try await Self.harness(reopened, users: false)
        try await second.run { client in
            var older = ServerHarness.insert("todos", 1, title: "older", at: ServerHarness.stamp(1_800_000_000_100))
            older.kind = .update
            older.values = ["title": .text("older")]
            older.stamps = ["title": ServerHarness.stamp(1_800_000_000_100)]
            let answer = try await client.push("todos", token: second.ann, key: "k2", PushRequest(schemaVersion: 1, changes: [older])).decode(PushResponse.self)
            #expect(answer.outcomes.first?.lost.first?.winningValue == .text("from a format 1 server"))
        }
        let version = try await DatabaseQueue(path: path).read { db in try Int.fetchOne(db, sql: "PRAGMA user_version") }
        #expect(version == SQLiteServerStorage.formatVersion)
    }

    @Test func aDatabaseFromANewerServerIsRefused() async throws {
        let path = try Self.path()
        _ = try SQLiteServerStorage(path: path)
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in try db.execute(sql: "PRAGMA user_version = \(SQLiteServerStorage.formatVersion + 1)") }
        try await queue.close()
        #expect(throws: StorageError.self) { try SQLiteServerStorage(path: path) }
    }
}

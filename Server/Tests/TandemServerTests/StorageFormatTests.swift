import Foundation
import GRDB
import HTTPTypes
import Testing
import TandemSchema
@testable import TandemServer
import TandemWire

/// The SQLite storage's file format: what the log keeps, and files of another format refused.
@Suite("Server database format")
struct StorageFormatTests {
    static func path() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appending(path: "tandem-format-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appending(path: "tandem.sqlite").path(percentEncoded: false)
    }

    static func harness(_ storage: SQLiteServerStorage, users: Bool) async throws -> ServerHarness {
        let ann =
            users
            ? try await TokenIssuer.issue(for: try await storage.addUser(name: "ann", now: 0), in: storage)
            : try await TokenIssuer.issue(for: try #require(try await storage.user(named: "ann")), in: storage)
        return ServerHarness(storage: storage, dependencies: ServerDependencies(storage: storage, now: { 1_800_000_000_000 }), ann: ann, bob: ann)
    }

    /// Changes applied whole are logged from the push's own canonical text: what the log
    /// holds is byte for byte what writing each logged change would give, whatever the
    /// request's member order or the case of its record URIs.
    @Test func logEntriesAreStoredInCanonicalFormWhateverTheRequestLooksLike() async throws {
        let path = try Self.path()
        let harness = try await Self.harness(try SQLiteServerStorage(path: path), users: true)
        try await harness.run { client in
            try await client.setUp("todos", token: harness.ann)
            var upper = ServerHarness.insert("todos", 7)
            upper.record = upper.record.uppercased().replacingOccurrences(of: "TANDEM://TODOS/TODO/", with: "tandem://todos/Todo/")
            var update = ServerHarness.insert("todos", 1, at: ServerHarness.stamp(1_800_000_000_100))
            update.kind = .update
            update.values = ["title": .text("é \"quoted\"\n"), "rank": .integer(-3)]
            update.stamps = ["title": ServerHarness.stamp(1_800_000_000_100), "rank": ServerHarness.stamp(1_800_000_000_100)]
            let delete = WireChange(
                record: ServerHarness.uri("todos", 2), entity: "Todo", kind: .delete, values: [:],
                stamps: ["*": ServerHarness.stamp(1_800_000_000_200)])
            let request = PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("todos", 1), ServerHarness.insert("todos", 2), upper, update, delete])
            // JSONEncoder without sorted keys: not the canonical member order.
            let reply = try await client.send(
                .post, "/v1/datasets/todos/push", token: harness.ann, body: try JSONEncoder().encode(request),
                headers: [HTTPField.Name("Idempotency-Key")!: "k"])
            #expect(reply.status == .ok)
        }
        let stored = try await DatabaseQueue(path: path).read { db in try Data.fetchAll(db, sql: "SELECT change FROM log ORDER BY position") }
        #expect(stored.count == 5)
        for entry in stored {
            let change = try WireJSONReader.change(entry)
            #expect(entry == WireJSON.data { $0.append(change) }, "\(String(decoding: entry, as: UTF8.self))")
            if change.kind == .insert { #expect(change.stamps["*"] == change.stamps["title"], "an insert carries its creation stamp") }
        }
        let records = try stored.map { try WireJSONReader.change($0).record }
        #expect(records[2] == ServerHarness.uri("todos", 7), "the URI is logged in lowercase")
    }

    struct StoredEntry: Hashable, Sendable {
        var dataset: Int64
        var position: Int64
        var change: Data
    }

    static func logEntries(_ db: Database) throws -> [StoredEntry] {
        try Row.fetchAll(db, sql: "SELECT dataset_id, position, change FROM log ORDER BY position, dataset_id")
            .map { StoredEntry(dataset: $0[0], position: $0[1], change: $0[2]) }
    }

    /// A database of an earlier or a later format, or another program's SQLite file, is
    /// refused with what to do, and left as it was.
    @Test(arguments: [SQLiteServerStorage.formatVersion - 1, SQLiteServerStorage.formatVersion + 1, 0])
    func aDatabaseOfAnotherFormatIsRefusedAndLeftAsItWas(_ version: Int) async throws {
        let path = try Self.path()
        if version == 0 {
            let queue = try DatabaseQueue(path: path)
            try await queue.write { db in try db.execute(sql: "CREATE TABLE notes(text TEXT)") }
            try await queue.close()
        } else {
            _ = try SQLiteServerStorage(path: path)
            let queue = try DatabaseQueue(path: path)
            try await queue.write { db in try db.execute(sql: "PRAGMA user_version = \(version)") }
            try await queue.close()
        }
        var message = ""
        do {
            _ = try SQLiteServerStorage(path: path)
            Issue.record("opened a database of format \(version)")
        } catch let error as StorageError {
            message = "\(error)"
        }
        #expect(version == 0 ? message.contains("not a tandem-server database") : message.contains("format \(version)") && message.contains("new one"), "\(message)")
        let queue = try DatabaseQueue(path: path)
        let (after, tables) = try await queue.read { db in
            (try Int.fetchOne(db, sql: "PRAGMA user_version"), try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"))
        }
        try await queue.close()
        #expect(after == version)
        if version == 0 { #expect(tables == ["notes"]) }
    }
}

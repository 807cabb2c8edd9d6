import Foundation
import GRDB
import HTTPTypes
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
            let delete = WireChange(record: ServerHarness.uri("todos", 2), entity: "Todo", kind: .delete, values: [:],
                                    stamps: ["*": ServerHarness.stamp(1_800_000_000_200)])
            let request = PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("todos", 1), ServerHarness.insert("todos", 2), upper, update, delete])
            // JSONEncoder without sorted keys: not the canonical member order.
            let reply = try await client.send(.post, "/v1/datasets/todos/push", token: harness.ann, body: try JSONEncoder().encode(request),
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

    /// A format 3 log (positions shared by every dataset, an index beside it) is copied into
    /// the format 4 layout with its positions: a client's cursor still pulls what follows
    /// it, and new entries come after each dataset's last.
    @Test func aFormatThreeLogIsUpgradedAndCursorsStillPullWhatFollows() async throws {
        let path = try Self.path()
        let first = try await Self.harness(try SQLiteServerStorage(path: path), users: true)
        try await first.run { client in
            for dataset in ["todos", "other"] { try await client.setUp(dataset, token: first.ann) }
            for n in 1...3 {
                for dataset in ["todos", "other"] {
                    _ = try await client.push(dataset, token: first.ann, key: "\(dataset)\(n)", PushRequest(schemaVersion: 1, changes: [ServerHarness.insert(dataset, n)]))
                }
            }
        }
        // Rewrite the log as a format 3 server laid it out: one position sequence for all.
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in
            try db.execute(sql: """
                CREATE TABLE log3(position INTEGER PRIMARY KEY AUTOINCREMENT, dataset_id INTEGER NOT NULL, schema_version INTEGER NOT NULL,
                                  change BLOB NOT NULL);
                INSERT INTO log3(dataset_id, schema_version, change) SELECT dataset_id, schema_version, change FROM log ORDER BY position, dataset_id;
                DROP TABLE log;
                ALTER TABLE log3 RENAME TO log;
                CREATE INDEX log_by_dataset ON log(dataset_id, position);
                PRAGMA user_version = 3;
                """)
        }
        let before = try await queue.read { db in try Self.logEntries(db) }
        #expect(before.count == 6)
        try await queue.close()

        let second = try await Self.harness(try SQLiteServerStorage(path: path), users: false)
        try await second.run { client in
            let todos = try await client.pullAll("todos", token: second.ann, limit: 10)
            #expect(todos.map(\.change.record) == (1...3).map { ServerHarness.uri("todos", $0) })
            #expect(todos.map(\.position) == before.filter { String(decoding: $0.change, as: UTF8.self).contains("tandem://todos/") }.map(\.position))
            // A cursor from before the upgrade, after the first entry, pulls the other two and then the new one.
            let firstTodo = try #require(before.first { String(decoding: $0.change, as: UTF8.self).contains("tandem://todos/") })
            let cursor = Cursor(dataset: firstTodo.dataset, position: firstTodo.position).text
            _ = try await client.push("todos", token: second.ann, key: "new", PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("todos", 4)]))
            let after = try await client.pull("todos", token: second.ann, after: cursor, limit: 10)
            #expect(after.changes.map(\.change.record) == (2...4).map { ServerHarness.uri("todos", $0) })
            #expect(after.changes.map(\.position) == after.changes.map(\.position).sorted() && after.changes[2].position > todos[2].position)
            #expect(try await client.pullAll("other", token: second.ann, limit: 2).map(\.change.record) == (1...3).map { ServerHarness.uri("other", $0) })
        }
        let after = try await DatabaseQueue(path: path).read { db in
            (try Int.fetchOne(db, sql: "PRAGMA user_version"),
             try Self.logEntries(db),
             try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE name LIKE 'log%' ORDER BY name"))
        }
        #expect(after.0 == SQLiteServerStorage.formatVersion)
        let added = ServerHarness.uri("todos", 4)
        #expect(after.1.filter { !String(decoding: $0.change, as: UTF8.self).contains(added) } == before, "every entry kept, with its position")
        #expect(after.1.count == 7)
        #expect(after.2 == ["log"], "no old table or index left")
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

import Foundation
import NIOConcurrencyHelpers
import Logging
import Testing
import Tandem
import TandemWire
import TandemSchema
import GRDB
@testable import TandemSync
import TandemSyncTestSupport

/// A push's own log entries are not pulled back when the server says they are the push's
/// alone (``PushEcho``) and the store still holds what it pushed; otherwise they are.
@Suite("Skipping a push's echo")
struct EchoSkipTests {
    /// Passes requests through and counts the log entries pull answers carry.
    final class PullCounter: Transport {
        let base: any Transport
        private let count = NIOLockedValueBox(0)
        var pulled: Int { count.withLockedValue { $0 } }

        init(_ base: any Transport) { self.base = base }

        func send(_ request: TransportRequest) async throws -> TransportResponse {
            let response = try await base.send(request)
            if request.path.contains("/pull"), response.status == 200 {
                let page = try WireJSONReader.pullResponse(response.body)
                count.withLockedValue { $0 += page.changes.count }
            }
            return response
        }
    }

    static func engine(
        _ world: ConflictTableTests.World, _ store: ModelContainer, _ counter: PullCounter,
        _ configure: (inout SyncConfiguration) -> Void = { _ in }
    ) -> SyncEngine {
        let token = world.token
        var configuration = SyncConfiguration(token: { token })
        configure(&configuration)
        return SyncEngine(
            container: store, transport: counter, configuration: configuration,
            logger: Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() }))
    }

    @Test func aPushAloneInTheLogIsNotPulledBack() async throws {
        try await ConflictTableTests.world { w in
            try PushRangeTests.bulkInsert(w.a, 10...14)
            try SyncFixtures.update(w.a, 1, "title", "edited")
            let counter = PullCounter(w.transport)
            let a = Self.engine(w, w.a, counter) { $0.pushBatchSize = 2 }  // four batches, chained
            let summary = try await a.sync()
            #expect(summary.pushed == 6)
            #expect(counter.pulled == 0, "A pulled its own changes back")
            // B gets them all; A's cursor is past its own entries and still pulls B's.
            _ = try await w.syncB.sync()
            #expect(try w.converged())
            try SyncFixtures.update(w.b, 12, "rank", 99)
            _ = try await w.syncB.sync()
            _ = try await a.sync()
            #expect(counter.pulled == 1)
            #expect(try w.converged())
            #expect(try SyncFixtures.rows(w.a)[SyncFixtures.id(12)] == ["bulk 12", "99"])
        }
    }

    /// Logs batch 1 before batch 0 and answers batch 0 first: batch 0's echo starts after
    /// batch 1's entries, which the store has not been told about yet.
    final class SwappingTransport: Transport {
        let base: any Transport
        private let state = NIOLockedValueBox((secondLogged: false, firstAnswered: false))
        init(_ base: any Transport) { self.base = base }

        func send(_ request: TransportRequest) async throws -> TransportResponse {
            let key = request.headers["Idempotency-Key"] ?? ""
            if key.hasSuffix(":0/2") {
                try await SyncFixtures.waitUntil { state.withLockedValue { $0.secondLogged } }
                let response = try await base.send(request)
                state.withLockedValue { $0.firstAnswered = true }
                return response
            }
            if key.hasSuffix(":1/2") {
                let response = try await base.send(request)
                state.withLockedValue { $0.secondLogged = true }
                try await SyncFixtures.waitUntil { state.withLockedValue { $0.firstAnswered } }
                return response
            }
            return try await base.send(request)
        }
    }

    /// With two pushes in flight the server may log a later batch first; the earlier batch's
    /// echo then waits for the later one's answer instead of being dropped.
    @Test func echoesLoggedOutOfOrderStillChain() async throws {
        try await ConflictTableTests.world { w in
            try PushRangeTests.bulkInsert(w.a, 10...15)
            let counter = PullCounter(SwappingTransport(w.transport))
            let a = Self.engine(w, w.a, counter) {
                $0.pushBatchSize = 2; $0.pushesInFlight = 2
            }  // three batches
            let summary = try await a.sync()
            #expect(summary.pushed == 6)
            #expect(counter.pulled == 0, "A pulled its own changes back")
            _ = try await w.syncB.sync()
            #expect(try w.converged())
        }
    }

    @Test func aPushAfterAnotherReplicasIsPulledBackWithIt() async throws {
        try await ConflictTableTests.world { w in
            try SyncFixtures.insert(w.b, 20, title: "B's", rank: 1)
            _ = try await w.syncB.sync()
            try SyncFixtures.insert(w.a, 21, title: "A's", rank: 2)
            let counter = PullCounter(w.transport)
            _ = try await Self.engine(w, w.a, counter).sync()
            // B's entry lies between A's cursor and A's push: A pulls both.
            #expect(counter.pulled == 2)
            _ = try await w.syncB.sync()
            #expect(try w.converged())
        }
    }

    /// B deletes and re-inserts record 1 and syncs; then A, which has not pulled that,
    /// edits the record's title (newer than both).
    static func replaceRecordOneOnBThenEditItOnA(_ w: ConflictTableTests.World) async throws {
        try SyncFixtures.delete(w.b, 1)
        try await ConflictTableTests.tick()
        try SyncFixtures.insert(w.b, 1, title: "re-inserted", rank: 2)
        _ = try await w.syncB.sync()
        try await ConflictTableTests.tick()
        try SyncFixtures.update(w.a, 1, "title", "A's newer edit")
    }

    /// The row of record 1 is replaced by a pulled delete and re-insert made before A's
    /// edit; A pulls first (a conflict policy is set), then pushes its edit, which the
    /// server applies. Only pulling that edit back restores it on A.
    @Test func anEchoIsPulledBackWhenAPulledChangeCameAfterTheEdit() async throws {
        try await ConflictTableTests.world { w in
            try await Self.replaceRecordOneOnBThenEditItOnA(w)
            let counter = PullCounter(w.transport)
            let a = Self.engine(w, w.a, counter) { $0.conflictPolicies = ["Todo.rank": .lastWriterWins] }
            _ = try await a.sync()
            _ = try await w.syncB.sync()
            #expect(try SyncFixtures.rows(w.b)[SyncFixtures.id(1)]?.first == "A's newer edit")
            #expect(try w.converged(), "A kept the re-inserted title while the server has its edit")
            #expect(counter.pulled == 3, "delete and re-insert first, then A's own edit back")
        }
    }

    @Test func thePlantedSkipThatIgnoresPulledChangesDiverges() async throws {
        try await ConflictTableTests.world { w in
            try await Self.replaceRecordOneOnBThenEditItOnA(w)
            let a = Self.engine(w, w.a, PullCounter(w.transport)) { $0.conflictPolicies = ["Todo.rank": .lastWriterWins] }
            await a.plantEchoSkipIgnoringPulledChanges()
            _ = try await a.sync()
            _ = try await w.syncB.sync()
            #expect(try !w.converged(), "the planted skip should leave A behind; the test above would not notice its bug")
        }
    }

    /// A store that never pulled holds the empty cursor, which is where an empty log starts.
    @Test func theFirstPushIntoAnEmptyDatasetIsNotPulledBack() async throws {
        try await ConflictTableTests.world { w in
            let fresh = try SyncFixtures.memoryStore("fresh")
            try PushRangeTests.bulkInsert(fresh, 1...5)
            let counter = PullCounter(w.transport)
            _ = try await Self.engine(w, fresh, counter).sync()
            #expect(counter.pulled == 0)
            let other = try SyncFixtures.memoryStore("fresh")
            _ = try await Self.engine(w, other, PullCounter(w.transport)).sync()
            #expect(try SyncFixtures.rows(other) == SyncFixtures.rows(fresh))
        }
    }
}

/// Pulled values are bound straight to SQLite (``Statement/executeBound(_:)``): every kind
/// arrives as it was written, empty text and empty bytes included (not as NULL).
@Suite("Pulled values")
struct PulledValueTests {
    static let schema = Schema(entities: [
        Schema.Entity(
            name: "Todo",
            attributes: [
                Schema.Attribute(name: "title", type: .scalar(.string)),
                Schema.Attribute(name: "rank", type: .scalar(.int), isOptional: true),
                Schema.Attribute(name: "done", type: .scalar(.bool), isOptional: true),
                Schema.Attribute(name: "score", type: .scalar(.double), isOptional: true),
                Schema.Attribute(name: "photo", type: .scalar(.data), isOptional: true),
            ])
    ])

    static func values(_ store: ModelContainer) throws -> [String] {
        try store.read { db in
            try Row.fetchAll(db, sql: "SELECT \"#id\", title, rank, done, score, photo, typeof(title), typeof(photo) FROM Todo ORDER BY \"#id\"")
                .map { row in (0..<8).map { "\(row[$0] as DatabaseValue)" }.joined(separator: " ") }
        }
    }

    /// Each title's bytes, in hex: GRDB's `String` would stop at a NUL.
    static func titles(_ store: ModelContainer) throws -> [String] {
        try store.read { db in try String.fetchAll(db, sql: "SELECT hex(title) FROM Todo ORDER BY \"#id\"") }
    }

    /// Text with U+0000 inside reaches every replica whole, through inserts, updates and a
    /// conflict (the store keeps it whole; GRDB alone would read it cut at the NUL).
    @Test func textWithANulInsideArrivesWhole() async throws {
        try await ConflictTableTests.world(schema: Self.schema) { w in
            try w.a.write(author: "app") { db in
                // Written in SQL: GRDB's binding stops text at a NUL.
                try db.execute(sql: "INSERT INTO Todo (\"#id\", title) VALUES (?, 'before' || char(0) || 'after')", arguments: [SyncFixtures.id(21)])
                try db.execute(sql: "INSERT INTO Todo (\"#id\", title) VALUES (?, ?)", arguments: [SyncFixtures.id(22), "two"])
            }
            _ = try await w.syncA.sync()
            _ = try await w.syncB.sync()
            let hex = "before\u{0}after".utf8.map { String(format: "%02X", $0) }.joined()
            #expect(try Self.titles(w.a).suffix(2) == [hex, "74776F"], "the store holds it whole")
            #expect(try Self.titles(w.b) == Self.titles(w.a))
            // A conflict over a NUL-holding value: B's later edit wins on both, A's is logged whole.
            try w.a.write(author: "app") { db in
                try db.execute(sql: "UPDATE Todo SET title = 'a' || char(0) || 'side' WHERE \"#id\" = ?", arguments: [SyncFixtures.id(22)])
            }
            try await Task.sleep(for: .milliseconds(5))
            try w.b.write(author: "app") { db in
                try db.execute(sql: "UPDATE Todo SET title = 'b' || char(0) || 'side' WHERE \"#id\" = ?", arguments: [SyncFixtures.id(22)])
            }
            _ = try await w.syncB.sync()
            _ = try await w.syncA.sync()
            _ = try await w.syncB.sync()
            #expect(try Self.titles(w.a) == Self.titles(w.b))
            #expect(try Self.titles(w.a).last == "b\u{0}side".utf8.map { String(format: "%02X", $0) }.joined())
            let conflicts = try SyncStatus.conflicts(of: w.a)
            #expect(conflicts.contains { $0.localValue == #""a\u0000side""# && $0.remoteValue == #""b\u0000side""# }, "\(conflicts)")

            // An edit newer than a delete brings the record back, its values read from the row.
            try w.b.write(author: "app") { db in try db.execute(sql: "DELETE FROM Todo WHERE \"#id\" = ?", arguments: [SyncFixtures.id(22)]) }
            _ = try await w.syncB.sync()
            try await Task.sleep(for: .milliseconds(5))
            try w.a.write(author: "app") { db in
                try db.execute(sql: "UPDATE Todo SET title = 'c' || char(0) || 'back', rank = 3 WHERE \"#id\" = ?", arguments: [SyncFixtures.id(22)])
            }
            var wins = SyncConfiguration(token: { w.token })
            wins.updateWinsOverDelete = ["Todo"]
            _ = try await SyncEngine(container: w.a, transport: w.transport, configuration: wins).sync()
            _ = try await w.syncB.sync()
            #expect(try Self.titles(w.a).last == "c\u{0}back".utf8.map { String(format: "%02X", $0) }.joined())
            #expect(try Self.titles(w.b) == Self.titles(w.a))

            // Rows whose history was deleted are pushed from the rows themselves.
            let c = try SyncFixtures.memoryStore("todos", schema: Self.schema)
            try c.write(author: "app") { db in
                try db.execute(sql: "INSERT INTO Todo (\"#id\", title) VALUES (?, 'd' || char(0) || 'snapshot')", arguments: [SyncFixtures.id(23)])
            }
            _ = try c.deleteHistory(before: HistoryToken(rawValue: try c.currentHistoryToken().rawValue + 1))
            _ = try await SyncEngine(container: c, transport: w.transport, configuration: SyncConfiguration(token: { w.token })).sync()
            _ = try await w.syncA.sync()
            #expect(try Self.titles(w.a).last == "d\u{0}snapshot".utf8.map { String(format: "%02X", $0) }.joined())
        }
    }

    @Test func everyKindOfValueArrivesAsWritten() async throws {
        try await ConflictTableTests.world(schema: Self.schema) { w in
            try w.a.write(author: "app") { db in
                let insert = "INSERT INTO Todo (\"#id\", title, rank, done, score, photo) VALUES (?, ?, ?, ?, ?, ?)"
                try db.execute(sql: insert, arguments: [SyncFixtures.id(2), "", 0, true, 2.5, Data()])
                try db.execute(sql: insert, arguments: [SyncFixtures.id(3), "é \"quoted\" \n", Int64.min, false, -0.0, Data([0, 1, 255])])
                try db.execute(sql: insert, arguments: [SyncFixtures.id(4), "x", nil, nil, nil, nil])
            }
            _ = try await w.syncA.sync()
            _ = try await w.syncB.sync()
            let pulled = try Self.values(w.b)
            #expect(pulled == (try Self.values(w.a)))
            #expect(pulled.contains("\"\(SyncFixtures.id(2))\" \"\" 0 1 2.5 Data(0 bytes) \"text\" \"blob\""), "\(pulled)")
            // An update of existing rows goes the same way.
            try w.a.write(author: "app") { db in
                try db.execute(sql: "UPDATE Todo SET title = '', photo = ? WHERE \"#id\" = ?", arguments: [Data(), SyncFixtures.id(4)])
            }
            _ = try await w.syncA.sync()
            _ = try await w.syncB.sync()
            #expect(try Self.values(w.b) == (try Self.values(w.a)))
        }
    }
}

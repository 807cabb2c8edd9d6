import Foundation
import Synchronization
import Logging
import Testing
import Tandem
import TandemWire
@testable import TandemSync

/// A push's own log entries are not pulled back when the server says they are the push's
/// alone (``PushEcho``) and the store still holds what it pushed; otherwise they are.
@Suite("Skipping a push's echo")
struct EchoSkipTests {
    /// Passes requests through and counts the log entries pull answers carry.
    final class PullCounter: Transport {
        let base: any Transport
        private let count = Mutex(0)
        var pulled: Int { count.withLock { $0 } }

        init(_ base: any Transport) { self.base = base }

        func send(_ request: TransportRequest) async throws -> TransportResponse {
            let response = try await base.send(request)
            if request.path.contains("/pull"), response.status == 200 {
                let page = try WireJSONReader.pullResponse(response.body)
                count.withLock { $0 += page.changes.count }
            }
            return response
        }
    }

    static func engine(_ world: ConflictTableTests.World, _ store: ModelContainer, _ counter: PullCounter,
                       _ configure: (inout SyncConfiguration) -> Void = { _ in }) -> SyncEngine {
        let token = world.token
        var configuration = SyncConfiguration(token: { token })
        configure(&configuration)
        return SyncEngine(container: store, transport: counter, configuration: configuration,
                          logger: Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() }))
    }

    @Test func aPushAloneInTheLogIsNotPulledBack() async throws {
        try await ConflictTableTests.world { w in
            try PushRangeTests.bulkInsert(w.a, 10...14)
            try SyncFixtures.update(w.a, 1, "title", "edited")
            let counter = PullCounter(w.transport)
            let a = Self.engine(w, w.a, counter) { $0.pushBatchSize = 2 }   // four batches, chained
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

    /// The row of record 1 is replaced by a pulled delete and re-insert made before A's
    /// edit; A pulls first (a conflict policy is set), then pushes its edit, which the
    /// server applies. Only pulling that edit back restores it on A.
    @Test func anEchoIsPulledBackWhenAPulledChangeCameAfterTheEdit() async throws {
        try await ConflictTableTests.world { w in
            try SyncFixtures.delete(w.b, 1)
            try await ConflictTableTests.tick()
            try SyncFixtures.insert(w.b, 1, title: "re-inserted", rank: 2)
            _ = try await w.syncB.sync()
            try await ConflictTableTests.tick()
            try SyncFixtures.update(w.a, 1, "title", "A's newer edit")
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
            try SyncFixtures.delete(w.b, 1)
            try await ConflictTableTests.tick()
            try SyncFixtures.insert(w.b, 1, title: "re-inserted", rank: 2)
            _ = try await w.syncB.sync()
            try await ConflictTableTests.tick()
            try SyncFixtures.update(w.a, 1, "title", "A's newer edit")
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
            let fresh = try ConvergenceSimulationTests.store("fresh")
            try PushRangeTests.bulkInsert(fresh, 1...5)
            let counter = PullCounter(w.transport)
            _ = try await Self.engine(w, fresh, counter).sync()
            #expect(counter.pulled == 0)
            let other = try ConvergenceSimulationTests.store("fresh")
            _ = try await Self.engine(w, other, PullCounter(w.transport)).sync()
            #expect(try SyncFixtures.rows(other) == SyncFixtures.rows(fresh))
        }
    }
}

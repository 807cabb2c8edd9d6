import Foundation
import NIOConcurrencyHelpers
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
import GRDB
import Tandem
import TandemSchema
import TandemServer
@testable import TandemSync
import TandemSyncTestSupport

/// One test per row of the conflict table in docs/sync.md: two replicas and the server's
/// router (in-memory storage), each row's situation, the outcome on both replicas and what
/// the conflict log says.
@Suite("Conflict table, row by row")
struct ConflictTableTests {
    struct World {
        let a: ModelContainer
        let b: ModelContainer
        let syncA: SyncEngine
        let syncB: SyncEngine
        let transport: MemoryTransport
        let token: String
        let storage: MemoryServerStorage

        func converged() throws -> Bool { try SyncFixtures.rows(a) == SyncFixtures.rows(b) }
    }

    /// Runs `body` with two replicas of dataset `todos` that share record 1 (title "t", rank 1).
    static func world(schema: Schema = SyncFixtures.schema, _ body: @Sendable (World) async throws -> Void) async throws {
        let storage = MemoryServerStorage()
        let token = try await TokenIssuer.issue(for: try await storage.addUser(name: "ann", now: 0), in: storage)
        let app = Application(
            router: buildRouter(ServerDependencies(storage: storage)),
            logger: Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() }))
        try await app.test(.router) { client in
            let transport = ConvergenceSimulationTests.transport(client)
            let a = try SyncFixtures.memoryStore("todos", schema: schema), b = try SyncFixtures.memoryStore("todos", schema: schema)
            let quiet = Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() })
            let world = World(
                a: a, b: b,
                syncA: SyncEngine(container: a, transport: transport, configuration: SyncConfiguration(token: { token }), logger: quiet),
                syncB: SyncEngine(container: b, transport: transport, configuration: SyncConfiguration(token: { token }), logger: quiet),
                transport: transport, token: token, storage: storage)
            try SyncFixtures.insert(a, 1, title: "t", rank: 1)
            _ = try await world.syncA.sync()
            _ = try await world.syncB.sync()
            try await body(world)
        }
    }

    static func tick() async throws { try await Task.sleep(for: .milliseconds(3)) }

    @Test func aPushedValueLosingToANewerNullIsLoggedAsAnEditNotADelete() async throws {
        try await Self.world { w in
            try SyncFixtures.update(w.b, 1, "rank", 5)
            try await Self.tick()
            try SyncFixtures.update(w.a, 1, "rank", nil)
            _ = try await w.syncA.sync()
            _ = try await w.syncB.sync()  // pushes first: its 5 loses at the server
            let logged = try SyncStatus.conflicts(of: w.b).filter { $0.attribute == "rank" }
            #expect(logged.map(\.rule) == [ConflictRule.lastWriterWins.rawValue], "\(logged)")
            #expect(try w.converged())
        }
    }

    /// A record deleted and made again (same id) on one replica while another edits it: the
    /// edit, newer, wins at the server over the re-insert's value. Its maker pulls the delete
    /// (which takes its row and the edit's stamp), the re-insert, then its own edit back over
    /// the re-insert's value: the value that lost is logged there. Found by the hard soak
    /// (seed 285604740779): it was in no log.
    @Test func aValueOfARecordMadeAgainLosingToAnEditPushedAfterIsLogged() async throws {
        try await Self.world { w in
            try SyncFixtures.delete(w.a, 1)
            try SyncFixtures.insert(w.a, 1, title: "again", rank: 38)
            try await Self.tick()
            try SyncFixtures.update(w.b, 1, "rank", 37)  // newer, made without seeing either
            _ = try await w.syncA.sync()
            _ = try await w.syncB.sync()  // 37 wins at the server over the re-insert's 38
            _ = try await w.syncA.sync()
            #expect(try w.converged())
            let rank = try w.a.read { db in try Int.fetchOne(db, sql: ##"SELECT rank FROM Todo WHERE "#id" = ?"##, arguments: [SyncFixtures.id(1)]) }
            #expect(rank == 37)
            let logged = try (SyncStatus.conflicts(of: w.a) + SyncStatus.conflicts(of: w.b)).filter { $0.attribute == "rank" }
            #expect(logged.contains { $0.localValue == "38" && $0.remoteValue == "37" && $0.winner == .remote }, "\(logged)")
            #expect(logged.count == 1, "\(logged)")
        }
    }

    /// A replica edits a record another made, and resyncs: the server logs the resync's
    /// insert of the record with only the value it changed. The maker fills in the columns it
    /// leaves out with defaults under the zero stamp, which lose to its own values: that is
    /// no conflict. Before, its log had one per column ("kept 1, lost 0 @000000000000"), and
    /// the sync counted them (a hostile trial).
    @Test func aResyncsInsertOfAnEditedRecordLogsNoConflictElsewhere() async throws {
        try await Self.world { w in
            // The rank: the title, which every insert must have, is what A fills in.
            try SyncFixtures.update(w.b, 1, "rank", 5)
            _ = try await w.syncB.resync()
            let summary = try await w.syncA.sync()
            #expect(try w.converged())
            let atA = try SyncStatus.conflicts(of: w.a)
            #expect(atA.isEmpty, "\(atA)")
            #expect(summary.conflicts == 0)
            #expect(try w.a.read { db in try Int.fetchOne(db, sql: ##"SELECT rank FROM Todo WHERE "#id" = ?"##, arguments: [SyncFixtures.id(1)]) } == 5)
            // Nor at the resyncing replica, whose edit was made after the value it replaced.
            let atB = try SyncStatus.conflicts(of: w.b)
            #expect(atB.isEmpty, "\(atB)")
        }
    }

    /// A requested resync pulls the log from the start again: values this store pulled and
    /// decided before are not logged again, neither the conflict it logged then nor the
    /// values its edits replaced later. Before, the resync logged every value the replica
    /// ever overwrote ("kept b, lost t"), and the real conflict twice.
    @Test func aRequestedResyncLogsNoConflictAgain() async throws {
        try await Self.world { w in
            try SyncFixtures.update(w.a, 1, "title", "a")
            try await Self.tick()
            try SyncFixtures.update(w.b, 1, "title", "b")  // newer
            _ = try await w.syncA.sync()
            _ = try await w.syncB.sync()  // b wins; A's older "a" pulled after it: logged
            let before = try SyncStatus.conflicts(of: w.b)
            #expect(before.count == 1 && before[0].remoteValue == #""a""#, "\(before)")
            let summary = try await w.syncB.resync()
            #expect(summary.resynced && summary.resyncReason == .requested)
            #expect(summary.conflicts == 0, "\(summary)")
            #expect(try SyncStatus.conflicts(of: w.b) == before)
            _ = try await w.syncA.sync()
            #expect(try w.converged())
        }
    }

    /// A requested resync into a dataset deleted and made again: the server no longer takes
    /// the store's old cursor, so the positions it had pulled are of another history, and a
    /// concurrent edit replayed there is logged (taken for replayed, it would be in no log).
    @Test func aResyncIntoADatasetMadeAgainLogsTheConflictsItReplays() async throws {
        try await Self.world { w in
            let deleted = try await w.transport.send(
                TransportRequest(method: "DELETE", path: "/v1/datasets/todos", headers: ["Authorization": "Bearer \(w.token)"]))
            #expect(deleted.status == 204)
            try SyncFixtures.update(w.a, 1, "title", "a")
            try await Self.tick()
            try SyncFixtures.update(w.b, 1, "title", "b")  // newer, made without seeing "a"
            _ = try? await w.syncA.sync()  // 404: the next sync makes the handshake again
            _ = try await w.syncA.sync()  // makes the dataset again, with the record and its "a"
            _ = try await w.syncB.resync()
            let atB = try SyncStatus.conflicts(of: w.b)
            #expect(atB.contains { $0.localValue == #""b""# && $0.remoteValue == #""a""# && $0.winner == .local }, "\(atB)")
            _ = try await w.syncA.sync()
            #expect(try w.converged())
        }
    }

    /// A replica that edited nothing resyncs while behind: its push of the values it holds
    /// (another replica's, replaced there since) loses at the server, and that is no conflict
    /// of its own; it logged one per replaced value (a second hostile trial).
    @Test func aStaleReplicasResyncLogsNoConflictForValuesItOnlyHeld() async throws {
        try await Self.world { w in
            try SyncFixtures.update(w.a, 1, "title", "t1")
            _ = try await w.syncA.sync()
            let summary = try await w.syncB.resync()
            let atB = try SyncStatus.conflicts(of: w.b)
            #expect(atB.isEmpty && summary.conflicts == 0, "\(summary) \(atB)")
            #expect(try w.converged())
            #expect(try SyncFixtures.rows(w.b)[SyncFixtures.id(1)]?.contains("t1") == true)
        }
    }

    /// An edit made offline, then a resync: the edit and the resync's push of the record both
    /// lose to a newer edit elsewhere: one conflict, logged and counted once (the summary said
    /// 2 beside one log entry: a second hostile trial).
    @Test func aResyncCountsTheConflictItLogsOnce() async throws {
        try await Self.world { w in
            try SyncFixtures.update(w.a, 1, "title", "a")
            try await Self.tick()
            try SyncFixtures.update(w.b, 1, "title", "b")
            _ = try await w.syncB.sync()
            let summary = try await w.syncA.resync()
            let atA = try SyncStatus.conflicts(of: w.a)
            #expect(atA.count == 1 && summary.conflicts == 1, "\(summary) \(atA)")
            #expect(atA.first?.localValue == #""a""# && atA.first?.remoteValue == #""b""#)
            _ = try await w.syncB.sync()
            #expect(try w.converged())
        }
    }

    /// An insert the server refused (a value of the wrong type), fixed by a later edit after
    /// another replica made and deleted a record of the same id: the insert is as old as its
    /// making, so that delete wins over it (and over the fix, made without seeing it). Before,
    /// the server dated the insert by its fix and brought the record back with the fix alone;
    /// the other replica could not insert a record without its title, and the two diverged
    /// for good. Found by the hard soak (seeds 4002444152811, 4429657929408).
    @Test func aRefusedInsertFixedAfterADeleteElsewhereLosesToThatDelete() async throws {
        try await Self.world { w in
            try w.a.write(author: "app") { db in
                try db.execute(sql: ##"INSERT INTO Todo ("#id", title, rank) VALUES (?, 'mine', 'bad')"##, arguments: [SyncFixtures.id(5)])
            }
            _ = try await w.syncA.sync()  // refused: waits in the quarantine
            try await Self.tick()
            try SyncFixtures.insert(w.b, 5, title: "theirs", rank: 2)
            _ = try await w.syncB.sync()
            try SyncFixtures.delete(w.b, 5)
            _ = try await w.syncB.sync()
            try await Self.tick()
            try SyncFixtures.update(w.a, 5, "rank", 1000)  // the fix, after the delete
            _ = try await w.syncA.sync()
            _ = try await w.syncB.sync()
            _ = try await w.syncA.sync()
            let (rowsA, rowsB) = (try SyncFixtures.rows(w.a), try SyncFixtures.rows(w.b))
            #expect(rowsA == rowsB)
            let a = try w.a.read { db in try Int.fetchOne(db, sql: ##"SELECT count(*) FROM Todo WHERE "#id" = ?"##, arguments: [SyncFixtures.id(5)]) }
            #expect(a == 0)
            #expect(try SyncStatus.quarantined(of: w.b).isEmpty)
            let logged = try SyncStatus.conflicts(of: w.a).filter { $0.record.hasSuffix(SyncFixtures.id(5)) }
            #expect(logged.contains { $0.attribute == "rank" && $0.localValue == "1000" && $0.rule == ConflictRule.deleteWins.rawValue }, "\(logged)")
        }
    }

    @Test func theSameColumnEditedTwiceTheNewerWinsAndOtherColumnsMerge() async throws {
        try await Self.world { w in
            try SyncFixtures.update(w.a, 1, "title", "from A")
            try await Self.tick()
            try SyncFixtures.update(w.b, 1, "title", "from B")
            try SyncFixtures.update(w.a, 1, "rank", 7)  // only A touches rank: it merges
            _ = try await w.syncA.sync()
            let b = try await w.syncB.sync()
            _ = try await w.syncA.sync()
            #expect(try w.converged())
            #expect(try SyncFixtures.rows(w.a)[SyncFixtures.id(1)] == ["from B", "7"])
            #expect(b.conflicts == 1, "B kept its newer title and logs A's as lost")
            let logged = try SyncStatus.conflicts(of: w.b)
            #expect(logged.contains { $0.attribute == "title" && $0.winner == .local && $0.remoteValue == #""from A""# }, "B logs A's value as lost to its unpushed edit")
        }
    }

    /// A machine whose clock is a day ahead logs its conflicts at the world's time (its
    /// clock corrected by the server's), not at tomorrow's.
    @Test func aStoreWithAWrongClockLogsItsConflictsAtTheServersTime() async throws {
        try await Self.world { w in
            let day: Int64 = 86_400_000
            var configuration = ModelConfiguration(isStoredInMemoryOnly: true, dataset: "todos")
            configuration.clock = WallClock({ Date().addingTimeInterval(86_400) })
            let ahead = try ModelContainer(schema: SyncFixtures.schema, configuration: configuration)
            let engine = SyncEngine(
                container: ahead, transport: w.transport, configuration: SyncConfiguration(token: { w.token }),
                now: { Int64(Date().timeIntervalSince1970 * 1000) + day })
            _ = try await engine.sync()
            // An edit here, then a newer one on a; pulled, it overwrites the one not pushed.
            try ahead.write(author: "app") { db in try db.execute(sql: "UPDATE Todo SET title = 'ahead' WHERE \"#id\" = ?", arguments: [SyncFixtures.id(1)]) }
            try await Self.tick()
            try SyncFixtures.update(w.a, 1, "title", "from a")
            _ = try await w.syncA.sync()
            _ = try await engine.sync()
            let logged = try #require(try SyncStatus.conflicts(of: ahead).first)
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            #expect(abs(logged.at - now) < 60_000, "logged \(logged.at - now) ms from now")
        }
    }

    @Test func aPulledValueNewerThanAnUnpushedLocalEditOverwritesItAndIsLogged() async throws {
        try await Self.world { w in
            try SyncFixtures.update(w.b, 1, "title", "older on B")
            try await Self.tick()
            try SyncFixtures.update(w.a, 1, "title", "newer on A")
            _ = try await w.syncA.sync()
            _ = try await w.syncB.sync()  // B pushes its older value (loses at the server), then pulls A's
            #expect(try SyncFixtures.rows(w.b)[SyncFixtures.id(1)]?.first == "newer on A")
            #expect(try SyncStatus.conflicts(of: w.b).contains { $0.winner == .server && $0.rule == "lastWriterWins" && $0.localValue == #""older on B""# })
            #expect(try w.converged())
        }
    }

    @Test func deleteAgainstAnUpdateThatReachedTheServerFirstTheDeleteWins() async throws {
        try await Self.world { w in
            try SyncFixtures.update(w.b, 1, "rank", 20)
            try SyncFixtures.delete(w.a, 1)
            _ = try await w.syncB.sync()
            _ = try await w.syncA.sync()
            _ = try await w.syncB.sync()
            #expect(try SyncFixtures.rows(w.a).isEmpty && SyncFixtures.rows(w.b).isEmpty)
            #expect(try SyncStatus.conflicts(of: w.a).contains { $0.rule == "deleteWins" && $0.winner == .local && $0.remoteValue == "20" })
        }
    }

    @Test func deleteAgainstAnUpdateThatReachesTheServerLaterTheDeleteWins() async throws {
        try await Self.world { w in
            try SyncFixtures.delete(w.a, 1)
            try await Self.tick()
            try SyncFixtures.update(w.b, 1, "rank", 20)  // newer than the delete, still loses
            _ = try await w.syncA.sync()
            _ = try await w.syncB.sync()
            #expect(try SyncFixtures.rows(w.b).isEmpty)
            #expect(try SyncStatus.conflicts(of: w.b).contains { $0.rule == "deleteWins" && $0.winner == .server && $0.localValue == "20" })
        }
    }

    @Test func aPulledDeleteRemovesARowWithAnUnpushedEditAndLogsIt() async throws {
        try await Self.world { w in
            try SyncFixtures.delete(w.a, 1)
            _ = try await w.syncA.sync()
            try await Self.tick()
            try SyncFixtures.update(w.b, 1, "title", "edited")
            // Pull before pushing: the engine pushes first, so drive the pull directly.
            _ = try await w.syncB.handshake()
            _ = try await w.syncB.pull()
            #expect(try SyncFixtures.rows(w.b).isEmpty)
            #expect(try SyncStatus.conflicts(of: w.b).contains { $0.attribute == "*" && $0.rule == "deleteWins" && $0.winner == .remote })
        }
    }

    @Test func aReinsertNewerThanTheDeleteBringsTheRecordBackEverywhere() async throws {
        try await Self.world { w in
            try SyncFixtures.delete(w.a, 1)
            _ = try await w.syncA.sync()
            _ = try await w.syncB.sync()
            try await Self.tick()
            try SyncFixtures.insert(w.b, 1, title: "back", rank: 2)
            _ = try await w.syncB.sync()
            _ = try await w.syncA.sync()
            #expect(try SyncFixtures.rows(w.a)[SyncFixtures.id(1)] == ["back", "2"])
            #expect(try w.converged())
        }
    }

    @Test func anEditMadeWhileAPushIsInFlightIsPushedNextTime() async throws {
        try await Self.world { w in
            let a = w.a
            let edited = NIOLockedValueBox(false)
            let slow = MemoryTransport { request in
                if request.path.hasSuffix("/push"), !edited.withLockedValue({ $0 }) {
                    edited.withLockedValue { $0 = true }
                    try SyncFixtures.update(a, 1, "rank", 99)  // while the push is on the wire
                }
                return try await w.transport.send(request)
            }
            try SyncFixtures.update(a, 1, "title", "first")
            let engine = SyncEngine(container: a, transport: slow, configuration: SyncConfiguration(token: { w.token }))
            let summary = try await engine.sync()
            #expect(summary.pushed == 2, "the push loop takes the edit made meanwhile as the next range")
            #expect(try SyncStatus(of: a).pendingChanges == 0)
            _ = try await w.syncB.sync()
            #expect(try SyncFixtures.rows(w.b)[SyncFixtures.id(1)] == ["first", "99"])
        }
    }

    /// A record of an entity this store's schema lacks (a newer app version's) is kept aside
    /// for a schema that has it, not quarantined: the sync is complete.
    @Test func aRecordOfANewerSchemasEntityIsKeptAndSyncGoesOn() async throws {
        try await Self.world { w in
            // A store whose schema has a second entity pushes a record the other store lacks.
            var wider = SyncFixtures.schema
            wider.entities.append(.init(name: "Note", attributes: [.init(name: "text", type: .scalar(.string))]))
            let c = try ModelContainer(schema: wider, configuration: ModelConfiguration(isStoredInMemoryOnly: true, dataset: "todos"))
            try c.write(author: "app") { db in try db.execute(sql: "INSERT INTO Note (\"#id\", text) VALUES (?, 'hi')", arguments: [SyncFixtures.id(9)]) }
            try SyncFixtures.insert(c, 2, title: "from C")
            _ = try await SyncEngine(container: c, transport: w.transport, configuration: SyncConfiguration(token: { w.token })).sync()
            let summary = try await w.syncA.sync()
            #expect(summary.quarantined == 0 && summary.isComplete, "\(summary)")
            #expect(summary.keptForNewerSchema == 2, "the record's existence and its text: \(summary)")
            #expect(try SyncFixtures.rows(w.a)[SyncFixtures.id(2)] == ["from C", "nil"], "the rest of the page was applied")
            #expect(try SyncStatus.quarantined(of: w.a).isEmpty)
        }
    }

    /// A project deleted on A while B adds a todo to it: A's cascade never saw the todo, so B
    /// applies the delete rule when the delete arrives, and pushes the result.
    @Test(arguments: [false, true])
    func aParentDeletedWhileAChildIsAddedElsewhereTakesTheChildAlong(deleteReachesTheServerFirst: Bool) async throws {
        try await Self.world { w in
            try SyncFixtures.insertProject(w.a, 10, name: "home")
            _ = try await w.syncA.sync()
            _ = try await w.syncB.sync()
            try SyncFixtures.deleteProject(w.a, 10)
            try SyncFixtures.insert(w.b, 2, title: "new in home")
            try SyncFixtures.move(w.b, 2, to: 10)
            if deleteReachesTheServerFirst {
                _ = try await w.syncA.sync()
                _ = try await w.syncB.sync()
            } else {
                _ = try await w.syncB.sync()
                _ = try await w.syncA.sync()
                _ = try await w.syncB.sync()
            }
            _ = try await w.syncB.sync()  // pushes what the delete rule decided
            _ = try await w.syncA.sync()
            #expect(try SyncFixtures.rows(w.b)[SyncFixtures.id(2)] == nil, "the todo went with its project")
            #expect(try SyncFixtures.state(w.a) == SyncFixtures.state(w.b))
            #expect(try SyncFixtures.dangling(w.a).isEmpty && SyncFixtures.dangling(w.b).isEmpty)
            // Logged by the replica that decided: the first to see the delete and the move
            // together (it pushes its decision in the same sync).
            let logged = try SyncStatus.conflicts(of: w.a) + SyncStatus.conflicts(of: w.b)
            #expect(logged.contains { $0.rule == "parentDeleted" && $0.attribute == "project" && $0.record.hasSuffix(SyncFixtures.id(2)) })
        }
    }

    /// A replica that pulls a project's delete and only then a todo moved into it (the move
    /// was pushed after the delete) applies the delete rule itself, without waiting for the
    /// mover to push its own decision.
    @Test func aReferenceArrivingAfterItsTargetsDeleteGetsTheDeleteRule() async throws {
        try await Self.world { w in
            try SyncFixtures.insertProject(w.a, 10, name: "home")
            _ = try await w.syncA.sync()
            _ = try await w.syncB.sync()
            try SyncFixtures.deleteProject(w.a, 10)
            try SyncFixtures.move(w.b, 1, to: 10)
            _ = try await w.syncA.sync()  // the delete is logged first
            _ = try await w.syncB.push(schemaVersion: try await w.syncB.handshake())  // then the move, B not having seen the delete
            let c = try SyncFixtures.memoryStore("todos")
            let syncC = SyncEngine(
                container: c, transport: w.transport, configuration: SyncConfiguration(token: { w.token }),
                logger: Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() }))
            _ = try await syncC.sync()
            #expect(try SyncFixtures.rows(c)[SyncFixtures.id(1)] == nil, "the todo moved into a deleted project went with it")
            #expect(try SyncStatus.conflicts(of: c).contains { $0.rule == "parentDeleted" && $0.record.hasSuffix(SyncFixtures.id(1)) })
            _ = try await w.syncB.sync()
            _ = try await w.syncA.sync()
            _ = try await syncC.sync()
            #expect(try SyncFixtures.state(w.a) == SyncFixtures.state(c) && SyncFixtures.state(w.b) == SyncFixtures.state(c))
        }
    }

    /// A replica catching up pulls a project's delete while the todo still points at it (a
    /// model save deletes first, then clears references), then the todo moved to another
    /// project: the move stands. Delete rules are decided once the pull is caught up.
    @Test func aChildMovedElsewhereAfterItsParentsDeleteKeepsItsNewParent() async throws {
        try await Self.world(schema: SyncFixtures.nullifyingSchema) { w in
            try SyncFixtures.insertProject(w.a, 10, name: "old")
            try SyncFixtures.insertProject(w.a, 11, name: "new")
            try SyncFixtures.move(w.a, 1, to: 10)
            _ = try await w.syncA.sync()
            _ = try await w.syncB.sync()
            try SyncFixtures.deleteProject(w.a, 10)
            _ = try await w.syncA.sync()
            _ = try await w.syncB.sync()
            try SyncFixtures.move(w.b, 1, to: 11)
            _ = try await w.syncB.sync()
            let c = try SyncFixtures.memoryStore("todos", schema: SyncFixtures.nullifyingSchema)
            let syncC = SyncEngine(
                container: c, transport: w.transport, configuration: SyncConfiguration(token: { w.token }),
                logger: Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() }))
            _ = try await syncC.sync()  // one pull: insert, delete of project 10, the todo cleared, then moved to 11
            #expect(try SyncFixtures.state(c).contains { $0.hasSuffix("in \(SyncFixtures.id(11))") })
            #expect(try SyncStatus.conflicts(of: c).isEmpty, "nothing lost: the todo no longer pointed at the deleted project")
            _ = try await w.syncA.sync()
            #expect(try SyncFixtures.state(w.a) == SyncFixtures.state(c) && SyncFixtures.state(w.b) == SyncFixtures.state(c))
        }
    }

    @Test func underNullifyAChildAddedElsewhereStaysWithoutItsParent() async throws {
        try await Self.world(schema: SyncFixtures.nullifyingSchema) { w in
            try SyncFixtures.insertProject(w.a, 10, name: "home")
            _ = try await w.syncA.sync()
            _ = try await w.syncB.sync()
            try SyncFixtures.deleteProject(w.a, 10)
            try SyncFixtures.insert(w.b, 2, title: "new in home")
            try SyncFixtures.move(w.b, 2, to: 10)
            _ = try await w.syncA.sync()
            _ = try await w.syncB.sync()
            _ = try await w.syncB.sync()
            _ = try await w.syncA.sync()
            #expect(try SyncFixtures.state(w.a).contains { $0.hasPrefix("todo \(SyncFixtures.id(2)) new in home nil in nil") })
            #expect(try SyncFixtures.state(w.a) == SyncFixtures.state(w.b))
        }
    }

    /// A todo can arrive before its project (the project's insert was pushed later, or by a
    /// replica that syncs later): it is applied at once and its reference resolves when the
    /// project arrives. Nothing is quarantined.
    @Test func aChangeArrivingBeforeTheRecordItReferencesIsAppliedAndResolvesLater() async throws {
        try await Self.world { w in
            try SyncFixtures.insert(w.a, 2, title: "early")
            try SyncFixtures.move(w.a, 2, to: 10)  // the project is created in a later transaction
            _ = try await w.syncA.sync()
            try SyncFixtures.insertProject(w.a, 10, name: "late")
            _ = try await w.syncB.sync()
            #expect(try SyncFixtures.dangling(w.b) == [SyncFixtures.id(2)], "applied before its project exists")
            _ = try await w.syncA.sync()
            let summary = try await w.syncB.sync()
            #expect(summary.quarantined == 0)
            #expect(try SyncFixtures.dangling(w.b).isEmpty)
            #expect(try SyncFixtures.state(w.a) == SyncFixtures.state(w.b))
            let project = try w.b.read { db in try String.fetchOne(db, sql: "SELECT p.name FROM Todo t JOIN Project p ON p.\"#id\" = t.project WHERE t.\"#id\" = ?", arguments: [SyncFixtures.id(2)]) }
            #expect(project == "late")
        }
    }
}

@Suite("Composite attributes merge leaf by leaf")
struct CompositeLeafTests {
    /// Todos with a composite `people` (name, age): columns `people.name`, `people.age`.
    static let schema: Schema = {
        var schema = SyncFixtures.schema
        schema.entities[0].attributes.append(
            Schema.Attribute(
                name: "people",
                type: .composite(
                    .init(
                        typeName: "People",
                        fields: [
                            .init(name: "name", type: .scalar(.string)), .init(name: "age", type: .scalar(.int)),
                        ])), isOptional: true))
        return schema
    }()

    static func people(_ store: ModelContainer) throws -> [String] {
        try store.read { db in
            try Row.fetchAll(db, sql: ##"SELECT "people.name", "people.age" FROM Todo WHERE "#id" = ?"##, arguments: [SyncFixtures.id(1)])
                .map { "\($0[0] ?? "nil") \(($0[1] as Int?).map(String.init) ?? "nil")" }
        }
    }

    @Test func concurrentEditsOfTwoLeavesOfOneCompositeBothSurvive() async throws {
        try await ConflictTableTests.world(schema: Self.schema) { w in
            try w.a.write(author: "app") { db in
                try db.execute(sql: ##"UPDATE Todo SET "people.name" = 'Ann', "people.age" = 30 WHERE "#id" = ?"##, arguments: [SyncFixtures.id(1)])
            }
            _ = try await w.syncA.sync()
            _ = try await w.syncB.sync()
            // Offline: A renames, B (later) changes the age.
            try w.a.write(author: "app") { db in
                try db.execute(sql: ##"UPDATE Todo SET "people.name" = 'Anna' WHERE "#id" = ?"##, arguments: [SyncFixtures.id(1)])
            }
            try await ConflictTableTests.tick()
            try w.b.write(author: "app") { db in
                try db.execute(sql: ##"UPDATE Todo SET "people.age" = 31 WHERE "#id" = ?"##, arguments: [SyncFixtures.id(1)])
            }
            _ = try await w.syncA.sync()
            let b = try await w.syncB.sync()
            _ = try await w.syncA.sync()
            #expect(try Self.people(w.a) == ["Anna 31"])
            #expect(try Self.people(w.b) == ["Anna 31"])
            #expect(b.conflicts == 0, "different leaves do not conflict")
        }
    }
}

@Suite("Local changes the server refuses")
struct RefusedChangesTests {
    @Test func aRefusedLocalChangeIsQuarantinedAndTheRestSyncs() async throws {
        try await ConflictTableTests.world { w in
            for n in 2...9 { try SyncFixtures.insert(w.a, n, title: "t\(n)", rank: n) }
            // A text in the integer column: SQLite stores it, the server refuses it (422).
            try w.a.write(author: "app") { db in
                try db.execute(sql: "UPDATE Todo SET rank = 'high' WHERE \"#id\" = ?", arguments: [SyncFixtures.id(5)])
            }
            let summary = try await w.syncA.sync()
            #expect(summary.quarantined == 1)
            #expect(summary.pushed == 8, "the other changes went through")
            let refused = try SyncStatus.quarantined(of: w.a)
            #expect(refused.count == 1 && refused[0].reason.contains("refused this local change") && refused[0].change.contains(#""rank":"high""#))
            #expect(!summary.isComplete && summary.waitingLocal == 1, "the sync says it did not finish")
            #expect(try SyncStatus(of: w.a).pendingChanges == 1, "the refused change counts as pending: it is not on the server")
            _ = try await w.syncB.sync()
            #expect(try SyncFixtures.rows(w.b).count == 9)
            #expect(try SyncFixtures.rows(w.b)[SyncFixtures.id(5)] == ["t5", "5"], "the server keeps the last value it accepted")

            // Sent again on the next sync, and refused again while the value is wrong.
            let again = try await w.syncA.sync()
            #expect(again.waitingLocal == 1)
            #expect(try SyncStatus.quarantined(of: w.a).count == 1)
            // Fixed by a later edit: the refused value is replaced, no longer waits, and the
            // fix reaches the other replica.
            try SyncFixtures.update(w.a, 5, "rank", 50)
            let fixed = try await w.syncA.sync()
            #expect(fixed.isComplete && fixed.waitingLocal == 0)
            #expect(try SyncStatus(of: w.a).pendingChanges == 0)
            #expect(try SyncStatus.conflicts(of: w.a).contains { $0.rule == "superseded" && ($0.localValue ?? "").contains(#""rank":"high""#) })
            _ = try await w.syncB.sync()
            #expect(try SyncFixtures.rows(w.b)[SyncFixtures.id(5)] == ["t5", "50"])
        }
    }

    /// A store whose app has not updated yet pulls values of an attribute its schema lacks:
    /// they are kept (for the schema that has them), and the sync is complete, not failed.
    @Test func valuesOfANewerSchemaAreKeptWithoutFailingTheSync() async throws {
        try await ConflictTableTests.world { w in
            var newer = SyncFixtures.schema
            newer.entities[0].attributes.append(Schema.Attribute(name: "note", type: .scalar(.string), isOptional: true))
            let c = try SyncFixtures.memoryStore("todos", schema: newer)
            let syncC = SyncEngine(
                container: c, transport: w.transport, configuration: SyncConfiguration(token: { w.token }),
                logger: Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() }))
            _ = try await syncC.sync()
            try c.write(author: "app") { db in
                try db.execute(sql: "UPDATE Todo SET note = 'new' WHERE \"#id\" = ?", arguments: [SyncFixtures.id(1)])
            }
            #expect(try await syncC.sync().isComplete)
            let older = try await w.syncB.sync()
            #expect(older.keptForNewerSchema == 1, "\(older)")
            #expect(older.isComplete && older.waitingPulled == 0, "\(older)")
            #expect(try await w.syncB.sync().isComplete, "and on every later sync")
            #expect(try await w.syncB.retryQuarantined() == 0, "nothing waits that a retry could apply")
        }
    }

    /// A sync cut off between its push and its pull (the pull refused), then an edit of the
    /// same record: the store pulls its own older value under its own newer one. That is an
    /// edit replaced, not a conflict, and the log stays clear of it (a hostile trial found
    /// 26 667 such entries after a bulk import cut off this way).
    @Test func aStoresOwnOlderValuePulledAfterACutOffSyncIsNotAConflict() async throws {
        try await ConflictTableTests.world { w in
            let cut = PullRefuser(w.transport)
            let a = SyncEngine(
                container: w.a, transport: cut, configuration: SyncConfiguration(token: { w.token }),
                logger: Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() }))
            try SyncFixtures.insert(w.b, 2, title: "from b")
            _ = try await w.syncB.sync()
            try SyncFixtures.update(w.a, 1, "title", "first")
            cut.refusing.withLockedValue { $0 = true }
            await #expect(throws: (any Error).self) { try await a.sync() }
            cut.refusing.withLockedValue { $0 = false }
            try SyncFixtures.update(w.a, 1, "title", "second")
            let summary = try await a.sync()
            #expect(summary.isComplete)
            let logged = try SyncStatus.conflicts(of: w.a)
            #expect(logged.isEmpty, "\(logged)")
            _ = try await w.syncB.sync()
            #expect(try SyncFixtures.rows(w.b)[SyncFixtures.id(1)]?.first == "second")
        }
    }
}

@Suite("Records without journal history")
struct SnapshotTests {
    @Test func rowsWhoseHistoryWasDeletedBeforeSyncAreStillPushed() async throws {
        try await ConflictTableTests.world { w in
            let c = try SyncFixtures.memoryStore("todos")
            for n in 20...44 { try SyncFixtures.insert(c, n, title: "old \(n)", rank: n) }
            // No reader yet: deleting history drops everything, as an app trimming it would.
            _ = try c.deleteHistory(before: HistoryToken(rawValue: try c.currentHistoryToken().rawValue + 1))
            #expect(try c.fetchHistory(HistoryDescriptor()).isEmpty)
            try SyncFixtures.insert(c, 50, title: "new", rank: 50)
            // Small batches: the 25 old rows are read in slices of 20 (ten batches' worth).
            var small = SyncConfiguration(token: { w.token })
            small.pushBatchSize = 2
            let summary = try await SyncEngine(container: c, transport: w.transport, configuration: small).sync()
            #expect(summary.pushed == 26)
            _ = try await w.syncA.sync()
            #expect(try SyncFixtures.rows(w.a).count == 27, "record 1 and the 26 of C")
            #expect(try SyncFixtures.rows(w.a)[SyncFixtures.id(22)] == ["old 22", "22"])
            let again = try await SyncEngine(container: c, transport: w.transport, configuration: SyncConfiguration(token: { w.token })).sync()
            #expect(again.pushed == 0, "the snapshot is pushed once")
        }
    }
}

@Suite("Unique values inserted on two replicas")
struct UniqueMergeTests {
    static let schema = Schema(entities: [
        Schema.Entity(
            name: "Tag",
            attributes: [
                Schema.Attribute(name: "code", type: .scalar(.string), options: [.unique]),
                Schema.Attribute(name: "label", type: .scalar(.string)),
            ])
    ])

    @Test func twoInsertsOfTheSameUniqueValueMergeIntoOneRecordEverywhere() async throws {
        try await ConflictTableTests.world { w in
            let stores = try (0..<3).map { _ in
                try ModelContainer(schema: Self.schema, configuration: ModelConfiguration(isStoredInMemoryOnly: true, dataset: "tags"))
            }
            let engines = stores.map { SyncEngine(container: $0, transport: w.transport, configuration: SyncConfiguration(token: { w.token })) }
            let ids = ["bbbbbbbb-0000-0000-0000-000000000001", "aaaaaaaa-0000-0000-0000-000000000001"]
            for (store, (id, label)) in zip(stores, zip(ids, ["from 0", "from 1"])) {
                try store.write(author: "app") { db in
                    try db.execute(sql: "INSERT INTO Tag (\"#id\", code, label) VALUES (?, 'urgent', ?)", arguments: [id, label])
                }
            }
            for _ in 0..<2 { for engine in engines { _ = try await engine.sync() } }
            let rows = try stores.map { store in
                try store.read { db in try Row.fetchAll(db, sql: "SELECT \"#id\", code, label FROM Tag").map { "\($0[0] as String) \($0[1] as String) \($0[2] as String)" } }
            }
            // One record everywhere, the smaller id; each column holds the newer of the two
            // values (the loser's newer ones carry over), the same on every replica.
            #expect(rows.allSatisfy { $0 == rows[0] } && rows[0].count == 1, "\(rows)")
            #expect(rows[0].first?.hasPrefix("aaaaaaaa-0000-0000-0000-000000000001 urgent from") == true, "\(rows)")
            let merge = try SyncStatus.conflicts(of: stores[0]).first { $0.rule == "uniqueMerge" && $0.winner == .remote }
            #expect(merge?.survivor?.hasSuffix("aaaaaaaa-0000-0000-0000-000000000001") == true && merge?.localValue?.contains(#""label":"from 0""#) == true)
            #expect(try stores.allSatisfy { try SyncStatus(of: $0).quarantined == 0 })
        }
    }

    /// Stores for dataset `tags` and their engines on `w`'s server.
    static func tagStores(_ count: Int, _ w: ConflictTableTests.World) throws -> ([ModelContainer], [SyncEngine]) {
        let stores = try (0..<count).map { _ in
            try ModelContainer(schema: Self.schema, configuration: ModelConfiguration(isStoredInMemoryOnly: true, dataset: "tags"))
        }
        return (stores, stores.map { SyncEngine(container: $0, transport: w.transport, configuration: SyncConfiguration(token: { w.token })) })
    }

    static func insertTag(_ store: ModelContainer, _ id: String, label: String) throws {
        try store.write(author: "app") { db in
            try db.execute(sql: "INSERT INTO Tag (\"#id\", code, label) VALUES (?, 'urgent', ?)", arguments: [id, label])
        }
    }

    static func labels(_ stores: [ModelContainer]) throws -> [[String]] {
        try stores.map { store in
            try store.read { db in try Row.fetchAll(db, sql: "SELECT \"#id\", label FROM Tag").map { "\($0[0] as String) \($0[1] as String)" } }
        }
    }

    static let survivor = "aaaaaaaa-0000-0000-0000-000000000001", loser = "bbbbbbbb-0000-0000-0000-000000000001"

    @Test func aSurvivorsValueReplacedByTheMergedRecordsNewerOneIsLoggedWhereItWasWritten() async throws {
        try await ConflictTableTests.world { w in
            let (stores, engines) = try Self.tagStores(2, w)
            // The survivor (smaller id) first, then the loser with a newer label: the merge
            // carries the loser's label over the survivor's, which lost.
            try Self.insertTag(stores[0], Self.survivor, label: "from 0")
            try await ConflictTableTests.tick()
            try Self.insertTag(stores[1], Self.loser, label: "from 1")
            for engine in engines + engines { _ = try await engine.sync() }
            let labels = try Self.labels(stores)
            #expect(labels[0] == ["\(Self.survivor) from 1"] && labels[1] == labels[0], "\(labels)")
            let lost = try SyncStatus.conflicts(of: stores[0]).first { $0.attribute == "label" }
            #expect(
                lost?.rule == "uniqueMerge" && lost?.winner == .remote && lost?.localValue == #""from 0""# && lost?.remoteValue == #""from 1""#
                    && lost?.record.hasSuffix(Self.survivor) == true, "\(String(describing: lost))")
            let dataset = try #require(await w.storage.datasetID(owner: 1, name: "tags"))
            #expect(await w.storage.lostValues(dataset: dataset).contains { $0.attribute == "label" && $0.value == .text("from 0") && $0.winningValue == .text("from 1") })
        }
    }

    @Test func anEditOfTheMergedRecordSentBeforeItsMakerHeardOfTheMergeLogsTheSurvivorsValueItReplaced() async throws {
        try await ConflictTableTests.world { w in
            let (stores, engines) = try Self.tagStores(3, w)
            // 1 makes the loser and 2 pulls it; 0 makes the survivor, newer, and syncs: merged.
            try Self.insertTag(stores[1], Self.loser, label: "from 1")
            _ = try await engines[1].sync()
            _ = try await engines[2].sync()
            try await ConflictTableTests.tick()
            try Self.insertTag(stores[0], Self.survivor, label: "from 0")
            _ = try await engines[0].sync()
            // 2, not knowing of the merge, edits the loser: the server points it at the survivor.
            try await ConflictTableTests.tick()
            try stores[2].write(author: "app") { db in
                try db.execute(sql: "UPDATE Tag SET label = 'edited on 2' WHERE \"#id\" = ?", arguments: [Self.loser])
            }
            for engine in engines + engines { _ = try await engine.sync() }
            let labels = try Self.labels(stores)
            #expect(labels.allSatisfy { $0 == ["\(Self.survivor) edited on 2"] }, "\(labels)")
            let conflicts = try SyncStatus.conflicts(of: stores[0])
            let lost = conflicts.first { $0.attribute == "label" && $0.localValue == #""from 0""# }
            #expect(lost?.rule == "uniqueMerge" && lost?.winner == .remote && lost?.record.hasSuffix(Self.survivor) == true, "\(conflicts)")
            let dataset = try #require(await w.storage.datasetID(owner: 1, name: "tags"))
            #expect(await w.storage.lostValues(dataset: dataset).contains { $0.value == .text("from 0") && $0.winningValue == .text("edited on 2") })
        }
    }

    @Test func aPushedChangeCannotCarryMergedFrom() async throws {
        try await ConflictTableTests.world { w in
            let (stores, engines) = try Self.tagStores(1, w)
            try Self.insertTag(stores[0], Self.survivor, label: "x")
            _ = try await engines[0].sync()
            let change =
                #"{"record":"tandem://tags/Tag/\#(Self.survivor)","entity":"Tag","kind":"update","mergedFrom":"tandem://tags/Tag/\#(Self.loser)","#
                + #""values":{"label":"y"},"stamps":{"label":"0190a1b2c3d4-0000-00000000000000aa"}}"#
            let headers = ["Authorization": "Bearer \(w.token)", "Idempotency-Key": UUID().uuidString.lowercased(), "Content-Type": "application/json"]
            let answer = try await w.transport.send(
                TransportRequest(
                    method: "POST", path: "/v1/datasets/tags/push", headers: headers, body: Data(#"{"schemaVersion":1,"changes":[\#(change)]}"#.utf8)))
            #expect(answer.status == 422 && String(decoding: answer.body, as: UTF8.self).contains("mergedFrom"), "\(answer.status) \(String(decoding: answer.body, as: UTF8.self))")
        }
    }
}

/// Counts pushes in flight at once (each held a few milliseconds).
final class ConcurrencyMeter: Transport {
    let base: any Transport
    private let state = NIOLockedValueBox((now: 0, most: 0))
    var most: Int { state.withLockedValue { $0.most } }
    init(_ base: any Transport) { self.base = base }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        guard request.path.hasSuffix("/push") else { return try await base.send(request) }
        state.withLockedValue {
            $0.now += 1; $0.most = max($0.most, $0.now)
        }
        defer { state.withLockedValue { $0.now -= 1 } }
        try await Task.sleep(for: .milliseconds(5))
        return try await base.send(request)
    }
}

extension UniqueMergeTests {
    /// Batches in flight may be logged in any order; a value freed in one batch and taken in
    /// the next must arrive in that order, so a range that frees a unique value (a rename
    /// here) is pushed one batch at a time; inserts alone, two at a time.
    @Test(arguments: [(true, true), (true, false), (false, true)]) func batchesThatCanFreeAUniqueValueAreSentOneAtATime(unique: Bool, renames: Bool) async throws {
        try await ConflictTableTests.world { w in
            let schema = Schema(entities: [
                Schema.Entity(
                    name: "Tag",
                    attributes: [
                        Schema.Attribute(name: "code", type: .scalar(.string), options: unique ? [.unique] : []),
                        Schema.Attribute(name: "label", type: .scalar(.string)),
                    ])
            ])
            let store = try ModelContainer(schema: schema, configuration: ModelConfiguration(isStoredInMemoryOnly: true, dataset: unique ? "tags" : "labels"))
            try store.write(author: "app") { db in
                for n in 0..<8 {
                    try db.execute(sql: "INSERT INTO Tag (\"#id\", code, label) VALUES (?, ?, 'x')", arguments: [SyncFixtures.id(n), "code \(n)"])
                }
            }
            let token = w.token
            var configuration = SyncConfiguration(token: { token })
            configuration.pushBatchSize = 2
            configuration.pushesInFlight = 2
            if renames {
                // Pushed first; then every record renamed: every range frees values.
                _ = try await SyncEngine(container: store, transport: w.transport, configuration: configuration).sync()
                try store.write(author: "app") { db in
                    try db.execute(sql: "UPDATE Tag SET code = 'renamed ' || code")
                }
            }
            let meter = ConcurrencyMeter(w.transport)
            #expect(try await SyncEngine(container: store, transport: meter, configuration: configuration).sync().pushed == 8)
            #expect(meter.most == (unique && renames ? 1 : 2))
        }
    }
}

@Suite("Conflict policies")
struct ConflictPolicyTests {
    static func engine(_ world: ConflictTableTests.World, _ store: ModelContainer, _ configure: (inout SyncConfiguration) -> Void) -> SyncEngine {
        let token = world.token
        var configuration = SyncConfiguration(token: { token })
        configure(&configuration)
        return SyncEngine(container: store, transport: world.transport, configuration: configuration)
    }

    @Test func serverWinsReplacesANewerLocalEditEverywhere() async throws {
        try await ConflictTableTests.world { w in
            try SyncFixtures.update(w.a, 1, "title", "server's")
            _ = try await w.syncA.sync()
            try await ConflictTableTests.tick()
            try SyncFixtures.update(w.b, 1, "title", "newer local")  // newer, but the policy says the server wins
            let b = Self.engine(w, w.b) { $0.conflictPolicies["Todo.title"] = .serverWins }
            _ = try await b.sync()  // pushes the local edit (it wins by stamp), pulls: decided → new edit
            _ = try await b.sync()  // pushes the decision
            _ = try await w.syncA.sync()
            #expect(try SyncFixtures.rows(w.b)[SyncFixtures.id(1)]?.first == "server's")
            #expect(try w.converged())
            #expect(try SyncStatus.conflicts(of: w.b).contains { $0.rule == "serverWins" && $0.winner == .remote })
        }
    }

    @Test func serverWinsKeepsTheServersNewestValueNotAnOlderOneFromTheSamePull() async throws {
        try await ConflictTableTests.world { w in
            let c = try SyncFixtures.memoryStore("todos", schema: SyncFixtures.schema)
            let token = w.token
            let syncC = SyncEngine(container: c, transport: w.transport, configuration: SyncConfiguration(token: { token }))
            _ = try await syncC.sync()
            // Edits of one title in this order: A, B (unpushed), C; the server ends with C's.
            try SyncFixtures.update(w.a, 1, "title", "A")
            try await ConflictTableTests.tick()
            try SyncFixtures.update(w.b, 1, "title", "B")
            try await ConflictTableTests.tick()
            try SyncFixtures.update(c, 1, "title", "C")
            _ = try await w.syncA.sync()
            _ = try await syncC.sync()
            // B pulls A's and C's values in one page: the server's value is C's.
            let b = Self.engine(w, w.b) { $0.conflictPolicies["Todo.title"] = .serverWins }
            for _ in 0..<2 {
                _ = try await b.sync()
                _ = try await w.syncA.sync()
                _ = try await syncC.sync()
            }
            #expect(try SyncFixtures.rows(w.b)[SyncFixtures.id(1)]?.first == "C")
            #expect(try SyncFixtures.rows(w.a)[SyncFixtures.id(1)]?.first == "C")
            #expect(try SyncFixtures.rows(c)[SyncFixtures.id(1)]?.first == "C")
        }
    }

    @Test func clientWinsKeepsAnOlderLocalEditEverywhere() async throws {
        try await ConflictTableTests.world { w in
            try SyncFixtures.update(w.b, 1, "title", "older local")
            try await ConflictTableTests.tick()
            try SyncFixtures.update(w.a, 1, "title", "newer remote")
            _ = try await w.syncA.sync()
            let b = Self.engine(w, w.b) { $0.conflictPolicies["Todo"] = .clientWins }
            // With a policy set, the sync pulls before it pushes: the local edit is still
            // unpushed when the value arrives.
            _ = try await b.sync()
            _ = try await w.syncA.sync()
            #expect(try SyncFixtures.rows(w.a)[SyncFixtures.id(1)]?.first == "older local")
            #expect(try w.converged())
        }
    }

    @Test func aCustomResolverMergesBothValues() async throws {
        try await ConflictTableTests.world { w in
            try SyncFixtures.update(w.a, 1, "rank", 5)
            _ = try await w.syncA.sync()
            try SyncFixtures.update(w.b, 1, "rank", 3)
            let b = Self.engine(w, w.b) {
                $0.conflictPolicies["Todo.rank"] = .custom { values in
                    guard case .integer(let local) = values.local, case .integer(let remote) = values.remote else { return values.remote }
                    return .integer(local + remote)
                }
            }
            _ = try await b.sync()  // a policy is set: it pulls before it pushes
            _ = try await w.syncA.sync()
            #expect(try SyncFixtures.rows(w.a)[SyncFixtures.id(1)]?.last == "8")
            #expect(try w.converged())
        }
    }

    @Test func updateWinsOverDeleteWhenSwitchedOnBringsTheRecordBack() async throws {
        try await ConflictTableTests.world { w in
            try SyncFixtures.delete(w.a, 1)
            _ = try await w.syncA.sync()
            try await ConflictTableTests.tick()
            try SyncFixtures.update(w.b, 1, "title", "keep me")
            let b = Self.engine(w, w.b) { $0.updateWinsOverDelete = ["Todo"] }
            _ = try await b.sync()  // a policy is set: it pulls before it pushes
            _ = try await w.syncA.sync()
            #expect(try SyncFixtures.rows(w.a)[SyncFixtures.id(1)]?.first == "keep me")
            #expect(try w.converged())
            #expect(try SyncStatus.conflicts(of: w.b).contains { $0.rule == "updateWinsOverDelete" && $0.winner == .local })
        }
    }
}

/// Refuses pulls while `refusing` (a network cut between a sync's push and its pull).
final class PullRefuser: Transport {
    let base: any Transport
    let refusing = NIOLockedValueBox(false)
    init(_ base: any Transport) { self.base = base }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        if request.path.contains("/pull"), refusing.withLockedValue({ $0 }) { throw SyncError(.unreachable, "cut off") }
        return try await base.send(request)
    }
}

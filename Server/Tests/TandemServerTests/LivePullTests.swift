import Foundation
import Hummingbird
import HTTPTypes
import Logging
import Testing
import TandemSchema
@testable import TandemServer
@testable import TandemServerPostgres
import TandemWire

/// Live sync on the server: `pull?wait=SECONDS` answers at once when entries follow the
/// cursor, else when a push commits, the wait ends or the server shuts down.
@Suite("Waiting pulls")
struct LivePullTests {
    /// Bounds here are far from the figures they tell apart (a wait of 240 s answered within
    /// 120): a loaded machine, hundreds of tests at once on 2 cores, adds seconds to each.
    static let maxPullWait: Duration = .seconds(300)

    /// A harness whose pulls may wait ``maxPullWait``.
    static func harness(_ kind: StorageKind) async throws -> ServerHarness {
        try await ServerHarness.make(kind) { $0.maxPullWait = maxPullWait }
    }

    /// Waits (briefly polling) until `signals` holds `count` waiting pulls.
    static func waitUntil(_ signals: LogSignals, holds count: Int, within limit: Duration = .seconds(120)) async throws {
        let deadline = ContinuousClock.now + limit
        while signals.waiting != count {
            guard ContinuousClock.now < deadline else {
                Issue.record("\(signals.waiting) pulls waiting, expected \(count)")
                return
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    @Test(arguments: StorageKind.allCases)
    func aWaitingPullAnswersWhenAPushArrives(_ kind: StorageKind) async throws {
        let harness = try await Self.harness(kind)
        try await harness.run { client in
            try await client.setUp("todos", token: harness.ann)
            let started = ContinuousClock.now
            async let waiting = client.send(.get, "/v1/datasets/todos/pull?limit=10&wait=240", token: harness.ann)
            try await Self.waitUntil(harness.storage.logSignals, holds: 1)
            let push = try await client.push("todos", token: harness.ann, key: "k1", PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("todos", 1)]))
            #expect(push.status == .ok)
            let answer = try await waiting
            #expect(answer.status == .ok)
            let page = try answer.decode(PullResponse.self)
            #expect(page.changes.map(\.change.record) == [ServerHarness.uri("todos", 1)])
            #expect(!page.nextCursor.isEmpty)
            // The wait is 240 s: less means the push answered it.
            #expect(ContinuousClock.now - started < .seconds(200), "answered by the push, not by the end of the wait")
            #expect(harness.storage.logSignals.waiting == 0)
        }
    }

    /// Entries after the cursor: the answer comes at once, whatever the wait.
    @Test(arguments: StorageKind.allCases)
    func aWaitingPullWithEntriesAfterItsCursorAnswersAtOnce(_ kind: StorageKind) async throws {
        let harness = try await Self.harness(kind)
        try await harness.run { client in
            try await client.setUp("todos", token: harness.ann)
            _ = try await client.push("todos", token: harness.ann, key: "k1", PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("todos", 1)]))
            let started = ContinuousClock.now
            let page = try await client.send(.get, "/v1/datasets/todos/pull?limit=10&wait=240", token: harness.ann).decode(PullResponse.self)
            #expect(page.changes.count == 1)
            #expect(ContinuousClock.now - started < .seconds(120), "at once, not after the wait (240 s)")
        }
    }

    /// Nothing arrives: an empty page with the same cursor once the wait (cut to the server's
    /// maximum) ends.
    @Test(arguments: StorageKind.allCases)
    func aWaitThatEndsAnswersAnEmptyPageAtTheSameCursor(_ kind: StorageKind) async throws {
        let harness = try await ServerHarness.make(kind) { $0.maxPullWait = .seconds(1) }
        try await harness.run { client in
            try await client.setUp("todos", token: harness.ann)
            _ = try await client.push("todos", token: harness.ann, key: "k1", PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("todos", 1)]))
            let cursor = try await client.pull("todos", token: harness.ann, limit: 10).nextCursor
            let started = ContinuousClock.now
            let answer = try await client.send(.get, "/v1/datasets/todos/pull?after=\(cursor)&wait=3600", token: harness.ann)
            let waited = ContinuousClock.now - started
            let page = try answer.decode(PullResponse.self)
            #expect(answer.status == .ok && page.changes.isEmpty && !page.hasMore)
            #expect(page.nextCursor == cursor)
            #expect(waited >= .milliseconds(900) && waited < .seconds(120), "cut to the 1 s maximum, not the 3 600 asked (waited \(waited))")
        }
    }

    @Test func aWaitThatIsNotANumberOfSecondsIsRefused() async throws {
        let harness = try await Self.harness(.memory)
        try await harness.run { client in
            try await client.setUp("todos", token: harness.ann)
            for wait in ["abc", "-1", "nan", "inf", "", "0x10", "1e1", "%2B1", "1.2.3", "1&wait=2"] {
                let answer = try await client.send(.get, "/v1/datasets/todos/pull?wait=\(wait)", token: harness.ann)
                #expect(answer.status == .badRequest && answer.errorCode == "invalid_wait", "wait=\(wait)")
            }
        }
    }

    /// A token revoked while its pull waits gets nothing that arrived meanwhile (401).
    @Test(arguments: StorageKind.allCases)
    func aTokenRevokedWhileItsPullWaitsGetsNothingNew(_ kind: StorageKind) async throws {
        let harness = try await Self.harness(kind)
        let other = try await TokenIssuer.issue(for: try #require(try await harness.storage.user(named: "ann")), in: harness.storage)
        try await harness.run { client in
            try await client.setUp("todos", token: harness.ann)
            async let waiting = client.send(.get, "/v1/datasets/todos/pull?wait=240", token: other)
            try await Self.waitUntil(harness.storage.logSignals, holds: 1)
            let id = try #require(APIToken(text: other)).id
            #expect(try await harness.storage.revokeToken(id: id))
            _ = try await client.push("todos", token: harness.ann, key: "k", PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("todos", 1)]))
            let answer = try await waiting
            #expect(answer.status == .unauthorized, "\(answer.status) \(String(decoding: answer.body, as: UTF8.self))")
            #expect(!String(decoding: answer.body, as: UTF8.self).contains("00000000-0000-0000-0000-000000000001"))
        }
    }

    /// A push to another dataset does not wake the pull; one to its own does.
    @Test(arguments: StorageKind.allCases)
    func aPushToAnotherDatasetDoesNotWakeAWaitingPull(_ kind: StorageKind) async throws {
        let harness = try await Self.harness(kind)
        try await harness.run { client in
            try await client.setUp("todos", token: harness.ann)
            try await client.setUp("todos", token: harness.bob)
            try await client.setUp("notes", token: harness.ann)
            async let waiting = client.send(.get, "/v1/datasets/todos/pull?wait=240", token: harness.ann)
            try await Self.waitUntil(harness.storage.logSignals, holds: 1)
            _ = try await client.push("todos", token: harness.bob, key: "b", PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("todos", 1)]))
            _ = try await client.push("notes", token: harness.ann, key: "n", PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("notes", 1)]))
            try await Task.sleep(for: .milliseconds(200))
            #expect(harness.storage.logSignals.waiting == 1, "still waiting after pushes to other datasets")
            _ = try await client.push("todos", token: harness.ann, key: "a", PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("todos", 2)]))
            let page = try await waiting.decode(PullResponse.self)
            #expect(page.changes.map(\.change.record) == [ServerHarness.uri("todos", 2)])
        }
    }

    /// Past the per-user limit: 429 `too_many_waiting` with `Retry-After`; another user and
    /// pulls without a wait are served.
    @Test func waitingPullsPastTheUsersLimitAreRefused() async throws {
        let harness = try await ServerHarness.make(.memory) { $0.maxWaitingPullsPerUser = 2 }
        try await harness.run { client in
            try await client.setUp("todos", token: harness.ann)
            try await client.setUp("todos", token: harness.bob)
            async let first = client.send(.get, "/v1/datasets/todos/pull?wait=240", token: harness.ann)
            async let second = client.send(.get, "/v1/datasets/todos/pull?wait=240", token: harness.ann)
            try await Self.waitUntil(harness.storage.logSignals, holds: 2)
            let third = try await client.send(.get, "/v1/datasets/todos/pull?wait=240", token: harness.ann)
            #expect(third.status == .tooManyRequests && third.errorCode == "too_many_waiting")
            #expect(third.headers[.retryAfter] != nil)
            #expect(try await client.send(.get, "/v1/datasets/todos/pull", token: harness.ann).status == .ok)
            async let bobs = client.send(.get, "/v1/datasets/todos/pull?wait=240", token: harness.bob)
            try await Self.waitUntil(harness.storage.logSignals, holds: 3)
            _ = try await client.push("todos", token: harness.ann, key: "a", PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("todos", 1)]))
            _ = try await client.push("todos", token: harness.bob, key: "b", PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("todos", 1)]))
            #expect(try await first.decode(PullResponse.self).changes.count == 1)
            #expect(try await second.decode(PullResponse.self).changes.count == 1)
            #expect(try await bobs.decode(PullResponse.self).changes.count == 1)
            #expect(harness.storage.logSignals.waiting(user: 1) == 0)
        }
    }

    /// Shutting down ends every wait at once (an empty page), so waits never hold a shutdown.
    @Test func closingTheSignalsEndsWaitsAtOnce() async throws {
        let harness = try await Self.harness(.memory)
        try await harness.run { client in
            try await client.setUp("todos", token: harness.ann)
            let started = ContinuousClock.now
            async let waiting = client.send(.get, "/v1/datasets/todos/pull?wait=240", token: harness.ann)
            try await Self.waitUntil(harness.storage.logSignals, holds: 1)
            harness.storage.logSignals.close()
            let page = try await waiting.decode(PullResponse.self)
            #expect(page.changes.isEmpty)
            #expect(ContinuousClock.now - started < .seconds(120))
            let later = ContinuousClock.now
            _ = try await client.send(.get, "/v1/datasets/todos/pull?wait=240", token: harness.ann)
            #expect(ContinuousClock.now - later < .seconds(120), "a wait that starts while closing ends at once")
        }
    }

    /// The capabilities name the feature and the longest wait.
    @Test func capabilitiesNameWaitingPulls() async throws {
        let harness = try await ServerHarness.make(.memory) { $0.maxPullWait = .seconds(42) }
        try await harness.run { client in
            let capabilities = try await client.send(.get, "/v1/capabilities", token: harness.ann).decode(ServerCapabilities.self)
            #expect(capabilities.features.contains("pullWait"))
            #expect(capabilities.maxPullWaitSeconds == 42)
        }
    }
}

/// ``LogSignals`` alone: no lost wake-up, timeouts, cancellation, limits.
@Suite("Log signals")
struct LogSignalsTests {
    @Test func aNotificationBetweenTicketAndWaitIsNotLost() async throws {
        let signals = LogSignals()
        let ticket = try signals.ticket(dataset: 1, after: 0, user: 1, limit: 4)
        signals.notify(dataset: 1)
        let started = ContinuousClock.now
        #expect(await ticket.wait(for: .seconds(240)))
        #expect(ContinuousClock.now - started < .seconds(120))
        ticket.cancel()
        #expect(signals.waiting == 0)
    }

    @Test func aWaitWithoutNotificationEndsAfterItsTimeout() async throws {
        let signals = LogSignals()
        let ticket = try signals.ticket(dataset: 1, after: 0, user: 1, limit: 4)
        signals.notify(dataset: 2)
        #expect(await ticket.wait(for: .milliseconds(100)) == false)
        ticket.cancel()
        let zero = try signals.ticket(dataset: 1, after: 0, user: 1, limit: 4)
        #expect(await zero.wait(for: .zero) == false, "a wait of zero ends")
        zero.cancel()
    }

    @Test func aCancelledTaskStopsWaiting() async throws {
        let signals = LogSignals()
        let ticket = try signals.ticket(dataset: 1, after: 0, user: 1, limit: 4)
        let task = Task { await ticket.wait(for: .seconds(60)) }
        try await Task.sleep(for: .milliseconds(50))
        task.cancel()
        #expect(await task.value == false)
        ticket.cancel()
        let next = try signals.ticket(dataset: 1, after: 0, user: 1, limit: 4)
        let already = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await next.wait(for: .seconds(60))
        }
        let started = ContinuousClock.now
        #expect(await already.value == false, "cancelled before it began")
        #expect(ContinuousClock.now - started < .seconds(30))
        next.cancel()
    }

    @Test func aClosedConnectionEndsTheWaitOnItOnly() async throws {
        let signals = LogSignals()
        let one = NSObject(), two = NSObject()
        let closing = try signals.ticket(dataset: 1, after: 0, user: 1, limit: 4, connection: ObjectIdentifier(one))
        let staying = try signals.ticket(dataset: 1, after: 0, user: 1, limit: 4, connection: ObjectIdentifier(two))
        let ended = Task { await closing.wait(for: .seconds(60)) }
        let woken = Task { await staying.wait(for: .seconds(60)) }
        try await Task.sleep(for: .milliseconds(50))
        let started = ContinuousClock.now
        signals.connectionClosed(ObjectIdentifier(one))
        #expect(await ended.value == false)
        #expect(ContinuousClock.now - started < .seconds(30))
        signals.notify(dataset: 1)
        #expect(await woken.value, "the other connection's pull still waited, and was woken")
        closing.cancel()
        staying.cancel()
        #expect(signals.waiting == 0)
        // Once connections are reported, one that closed before its ticket waits no time.
        signals.connectionOpened(ObjectIdentifier(two))
        let late = try signals.ticket(dataset: 1, after: 0, user: 1, limit: 4, connection: ObjectIdentifier(one))
        let started2 = ContinuousClock.now
        #expect(await late.wait(for: .seconds(60)) == false)
        #expect(ContinuousClock.now - started2 < .seconds(30))
        late.cancel()
    }

    @Test func ticketsPastTheUsersLimitAreRefusedAndComeBackWhenGiven() throws {
        let signals = LogSignals()
        let first = try signals.ticket(dataset: 1, after: 0, user: 1, limit: 2)
        let second = try signals.ticket(dataset: 2, after: 0, user: 1, limit: 2)
        #expect(throws: LogSignals.Busy.self) { try signals.ticket(dataset: 3, after: 0, user: 1, limit: 2) }
        let others = try signals.ticket(dataset: 1, after: 0, user: 2, limit: 2)
        first.cancel()
        first.cancel()  // twice: nothing more
        let third = try signals.ticket(dataset: 3, after: 5, user: 1, limit: 2)
        #expect(signals.waiting(user: 1) == 2)
        #expect(signals.waitingCursors() == [1: 0, 2: 0, 3: 5])
        for ticket in [second, others, third] { ticket.cancel() }
        #expect(signals.waiting == 0 && signals.waitingCursors().isEmpty)
    }
}

/// Waiting pulls across server nodes on one PostgreSQL database.
@Suite("Waiting pulls across nodes", .enabled(if: PostgresTestCluster.url != nil))
struct LivePullNodesTests {
    /// Two nodes on one database, `ann` a user of both.
    static func twoNodes(recheck: Duration) async throws -> (one: ServerHarness, two: ServerHarness) {
        let url = try await PostgresTestCluster.newDatabase()
        let logger = Logger(label: "test")
        let one = try await PostgresServerStorage(
            url: url, maxConnections: 4, leaseDeadline: PostgresTestCluster.leaseDeadline, operationDeadline: PostgresTestCluster.operationDeadline, logger: logger)
        let two = try await PostgresServerStorage(
            url: url, maxConnections: 4, leaseDeadline: PostgresTestCluster.leaseDeadline, operationDeadline: PostgresTestCluster.operationDeadline, recheckInterval: recheck, logger: logger)
        let ann = try await TokenIssuer.issue(for: try await one.addUser(name: "ann", now: 0), in: one)
        let node = { (storage: PostgresServerStorage) in
            var configuration = ServerConfiguration()
            configuration.maxPullWait = LivePullTests.maxPullWait
            return ServerHarness(
                storage: storage, dependencies: ServerDependencies(storage: storage, configuration: configuration, now: { 1_800_000_000_000 }), ann: ann,
                bob: "")
        }
        let deadline = ContinuousClock.now + .seconds(120)
        while !(one.isListening && two.isListening), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(one.isListening && two.isListening)
        return (node(one), node(two))
    }

    /// Node 2 hears node 1's push (`NOTIFY`): its rechecks are an hour apart, so only the
    /// notification can answer the waiting pull within the test's bound.
    @Test func aPushOnOneNodeWakesAPullWaitingOnAnother() async throws {
        let (one, two) = try await Self.twoNodes(recheck: .seconds(3600))
        try await one.run { first in
            try await two.run { second in
                try await first.setUp("todos", token: one.ann)
                let started = ContinuousClock.now
                async let waiting = second.send(.get, "/v1/datasets/todos/pull?wait=240", token: two.ann)
                try await LivePullTests.waitUntil(two.storage.logSignals, holds: 1)
                let push = try await first.push("todos", token: one.ann, key: "k", PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("todos", 1)]))
                #expect(push.status == .ok)
                let page = try await waiting.decode(PullResponse.self)
                #expect(page.changes.map(\.change.record) == [ServerHarness.uri("todos", 1)])
                #expect(ContinuousClock.now - started < .seconds(120))
            }
        }
    }

    /// Access changes on one node reach pulls waiting on another at once: a member removed,
    /// a token revoked (by an operator, on the shared database) and a dataset deleted each
    /// answer the waiting pull long before its wait ends, with nothing new.
    @Test func aRemovalARevocationAndADeletionOnOneNodeAnswerPullsWaitingOnAnother() async throws {
        let (one, two) = try await Self.twoNodes(recheck: .seconds(3600))
        let storage = one.storage
        let bob = try await storage.addUser(name: "bob", now: 0)
        let carol = try await storage.addUser(name: "carol", now: 0)
        let bobToken = try await TokenIssuer.issue(for: bob, in: storage)
        let carolToken = try await TokenIssuer.issue(for: carol, in: storage)
        try await one.run { first in
            try await two.run { second in
                try await first.setUp("todos", token: one.ann)
                for member in ["bob", "carol"] {
                    #expect(try await first.json(.put, "/v1/datasets/todos/members/\(member)", token: one.ann, MemberRole(role: .reader)).status == .created)
                }
                func waits(_ token: String, until change: () async throws -> Void) async throws -> (Reply, Duration) {
                    let started = ContinuousClock.now
                    let held = two.storage.logSignals.waiting
                    async let waiting = second.send(.get, "/v1/datasets/ann~todos/pull?wait=240", token: token)
                    try await LivePullTests.waitUntil(two.storage.logSignals, holds: held + 1)
                    try await change()
                    let reply = try await waiting
                    return (reply, ContinuousClock.now - started)
                }
                let (removed, removedAfter) = try await waits(bobToken) {
                    let reply = try await first.send(.delete, "/v1/datasets/todos/members/bob", token: one.ann)
                    #expect(reply.status == .noContent)
                }
                #expect(removed.status == .notFound && removed.errorCode == "not_shared" && removedAfter < .seconds(120))
                let (revoked, revokedAfter) = try await waits(carolToken) {
                    let id = String(carolToken.dropFirst(4).prefix(12))
                    let revoked = try await storage.revokeToken(id: id)
                    #expect(revoked)
                }
                #expect(revoked.status == .unauthorized && revokedAfter < .seconds(120))
                let (deleted, deletedAfter) = try await waits(two.ann) {
                    let reply = try await first.send(.delete, "/v1/datasets/todos", token: one.ann)
                    #expect(reply.status == .noContent)
                }
                #expect(deleted.status == .notFound && deletedAfter < .seconds(120), "\(deleted.status)")
            }
        }
    }

    /// A lost notification (node 1 announces nothing): node 2's recheck of the log heads
    /// answers the waiting pull within about its interval, long before the wait ends.
    @Test func aLostNotificationIsMadeUpByTheRecheck() async throws {
        let (one, two) = try await Self.twoNodes(recheck: .seconds(1))
        (one.storage as! PostgresServerStorage).announcesPushes.withLockedValue { $0 = false }
        try await one.run { first in
            try await two.run { second in
                try await first.setUp("todos", token: one.ann)
                async let waiting = second.send(.get, "/v1/datasets/todos/pull?wait=240", token: two.ann)
                try await LivePullTests.waitUntil(two.storage.logSignals, holds: 1)
                let pushed = ContinuousClock.now
                _ = try await first.push("todos", token: one.ann, key: "k", PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("todos", 1)]))
                let page = try await waiting.decode(PullResponse.self)
                #expect(page.changes.count == 1)
                let delay = ContinuousClock.now - pushed
                #expect(delay < .seconds(120), "made up by the recheck, not the end of the 240 s wait (took \(delay))")
            }
        }
    }
}

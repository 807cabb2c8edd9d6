import Foundation
import NIOConcurrencyHelpers
import Testing
import TandemSchema
import TandemWire

/// Two real `tandem-server` processes on one PostgreSQL database, as behind a load balancer:
/// clients that push through either node and pull through either see one log.
@Suite("Two tandem-server nodes on one PostgreSQL (processes)", .serialized, .enabled(if: PostgresTestCluster.url != nil))
struct PostgresClusterProcessTests {
    /// Every entry of the dataset's log, pulled in pages of `limit`, alternating between the
    /// nodes page by page: (position, record, title).
    static func pullAll(_ ports: [Int], token: String, limit: Int) throws -> [LogEntry] {
        var cursor = ""
        var entries: [LogEntry] = []
        for page in 0... {
            let reply = FairnessProcessTests.http("GET", port: ports[page % ports.count], "/v1/datasets/todos/pull?limit=\(limit)&after=\(cursor)", token: token)
            try #require(reply.status == 200, "\(reply.body)")
            let answer = try JSONDecoder().decode(PullResponse.self, from: Data(reply.body.utf8))
            entries += answer.changes
            cursor = answer.nextCursor
            if !answer.hasMore { break }
        }
        return entries
    }

    /// 8 concurrent pushers, half through each node, 12 pushes of 10 inserts each; then pulls
    /// in pages of 1, 7 and 100, alternating between the nodes: every change exactly once, at
    /// positions 1…960, in one order whatever the page size or node.
    @Test func pushesSplitAcrossTwoNodesArePulledExactlyOnceInOneOrderThroughEither() async throws {
        let database = try await PostgresTestCluster.newDatabaseURL()
        let token = try ServerProcessTests.setUp("", database: database)
        let one = try ServerProcessTests.startServer("", database: database)
        let two = try ServerProcessTests.startServer("", database: database)
        defer {
            for node in [one, two] {
                node.process.terminate()
                node.process.waitUntilExit()
            }
        }
        #expect(FairnessProcessTests.http("PUT", port: one.port, "/v1/datasets/todos", token: token).status == 201)
        #expect(FairnessProcessTests.http("PUT", port: two.port, "/v1/datasets/todos/schema", token: token, body: try ServerHarness.schema.canonicalJSON()).status == 201)
        let pushers = 8
        let pushes = 12
        let size = 10
        let ports = [one.port, two.port]
        let statuses = NIOLockedValueBox<[Int]>([])
        // Blocking work runs on threads of its own, off the test runner's few threads.
        try await FairnessProcessTests.onThread {
            DispatchQueue.concurrentPerform(iterations: pushers) { pusher in
                for push in 0..<pushes {
                    let stamp = ServerHarness.stamp(UInt64(Date().timeIntervalSince1970 * 1000))
                    let changes = (0..<size).map { ServerHarness.insert("todos", (pusher * pushes + push) * size + $0, title: "p\(pusher)-\(push)-\($0)", at: stamp) }
                    let body = try! JSONEncoder().encode(PushRequest(schemaVersion: 1, changes: changes))
                    let reply = FairnessProcessTests.http("POST", port: ports[pusher % 2], "/v1/datasets/todos/push", token: token, body: body, key: "p\(pusher)-\(push)")
                    statuses.withLockedValue { $0.append(reply.status) }
                }
            }
        }
        #expect(statuses.withLockedValue { $0 }.allSatisfy { $0 == 200 }, "\(statuses.withLockedValue { Dictionary(grouping: $0, by: { $0 }).mapValues(\.count) })")
        let total = pushers * pushes * size
        var orders: [[String]] = []
        for limit in [1, 7, 100] {
            for first in [0, 1] {
                let entries = try await FairnessProcessTests.onThread { try Self.pullAll(first == 0 ? ports : ports.reversed(), token: token, limit: limit) }
                #expect(entries.map(\.position) == Array(1...Int64(total)), "page size \(limit): positions 1…\(total), each once")
                let titles = entries.map { entry -> String in
                    if case .text(let title)? = entry.change.values["title"] { return title }
                    return "?"
                }
                #expect(Set(titles).count == total, "page size \(limit): every change once")
                orders.append(titles)
            }
        }
        #expect(Set(orders).count == 1, "one order through either node, whatever the page size")
    }

    /// A push whose answer was lost, retried on the other node with the same key: the other
    /// node replays the first answer, and the log holds the changes once.
    @Test func aRetryOnTheOtherNodeReplaysTheFirstAnswer() async throws {
        let database = try await PostgresTestCluster.newDatabaseURL()
        let token = try ServerProcessTests.setUp("", database: database)
        let one = try ServerProcessTests.startServer("", database: database)
        let two = try ServerProcessTests.startServer("", database: database)
        defer {
            for node in [one, two] {
                node.process.terminate()
                node.process.waitUntilExit()
            }
        }
        #expect(FairnessProcessTests.http("PUT", port: one.port, "/v1/datasets/todos", token: token).status == 201)
        #expect(FairnessProcessTests.http("PUT", port: one.port, "/v1/datasets/todos/schema", token: token, body: try ServerHarness.schema.canonicalJSON()).status == 201)
        let stamp = ServerHarness.stamp(UInt64(Date().timeIntervalSince1970 * 1000))
        let body = try JSONEncoder().encode(PushRequest(schemaVersion: 1, changes: (0..<5).map { ServerHarness.insert("todos", $0, at: stamp) }))
        let first = FairnessProcessTests.http("POST", port: one.port, "/v1/datasets/todos/push", token: token, body: body, key: "retry-1")
        let retry = FairnessProcessTests.http("POST", port: two.port, "/v1/datasets/todos/push", token: token, body: body, key: "retry-1")
        #expect(first.status == 200 && retry.status == 200)
        #expect(first.body == retry.body)
        #expect(try Self.pullAll([two.port], token: token, limit: 100).count == 5)
    }

    /// Pushes `body` under `key` until a node answers 200, trying the nodes in turn (a client
    /// retrying elsewhere after a failure); every status seen is added to `statuses`.
    /// `false` when `deadline` passed first.
    @discardableResult
    static func pushUntilAccepted(
        _ ports: [Int], token: String, body: Data, key: String, statuses: NIOLockedValueBox<[Int]>, deadline: ContinuousClock.Instant
    ) -> Bool {
        for attempt in 0... {
            let started = ContinuousClock.now
            let reply = FairnessProcessTests.http("POST", port: ports[attempt % ports.count], "/v1/datasets/todos/push", token: token, body: body, key: key, timeout: 30)
            statuses.withLockedValue { $0.append(reply.status) }
            if reply.status == 0 { print("no answer from \(ports[attempt % ports.count]) after \(ContinuousClock.now - started) at \(Date()): \(reply.body)") }
            if reply.status == 200 { return true }
            guard ContinuousClock.now < deadline else { return false }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return false
    }

    /// A push of `size` inserts titled `name-0`…, made now.
    static func batch(_ name: String, first: Int, size: Int) throws -> Data {
        let stamp = ServerHarness.stamp(UInt64(Date().timeIntervalSince1970 * 1000))
        return try JSONEncoder().encode(PushRequest(schemaVersion: 1, changes: (0..<size).map { ServerHarness.insert("todos", first + $0, title: "\(name)-\($0)", at: stamp) }))
    }

    /// How many log entries carry each title's batch name (the title up to its last `-`).
    static func batchCounts(_ entries: [LogEntry]) -> [String: Int] {
        var counts: [String: Int] = [:]
        for entry in entries {
            guard case .text(let title)? = entry.change.values["title"], let dash = title.lastIndex(of: "-") else { continue }
            counts[String(title[..<dash]), default: 0] += 1
        }
        return counts
    }

    /// kill -9 of the node that pushes go to, once some of a round's pushes have landed (20
    /// rounds; `TANDEM_PG_CRASH_ROUNDS` for more): the pushes it cut off are retried on the
    /// other node with their keys, as a client behind a load balancer does. In the end every
    /// push is in the log exactly once and whole (what committed before the kill is replayed,
    /// not applied twice; what did not is applied by the retry).
    @Test func aNodeKilledMidPushLeavesEveryPushWholeOnceAfterRetriesOnTheOther() async throws {
        let rounds = Int(ProcessInfo.processInfo.environment["TANDEM_PG_CRASH_ROUNDS"] ?? "") ?? 20
        let database = try await PostgresTestCluster.newDatabaseURL()
        let token = try ServerProcessTests.setUp("", database: database)
        var one = try ServerProcessTests.startServer("", database: database)
        let two = try ServerProcessTests.startServer("", database: database)
        defer {
            for node in [one, two] {
                node.process.terminate()
                node.process.waitUntilExit()
            }
        }
        #expect(FairnessProcessTests.http("PUT", port: two.port, "/v1/datasets/todos", token: token).status == 201)
        #expect(FairnessProcessTests.http("PUT", port: two.port, "/v1/datasets/todos/schema", token: token, body: try ServerHarness.schema.canonicalJSON()).status == 201)
        let size = 20
        var perRound = 40  // doubled (to 320) after a round the kill did not cut
        var cut = 0  // rounds whose kill cut pushes off
        var cursor = ""  // the log's end before the round
        var sent = 0  // batches sent so far
        for round in 0..<rounds {
            let failed = NIOLockedValueBox<[Int]>([])
            let port = one.port
            let first = sent
            let count = perRound
            sent += count
            // A retry sends the very body it sent first (another body under the key is refused).
            let bodies = try (first..<first + count).map { b in try Self.batch("b\(b)", first: b * 100, size: size) }
            let done = DispatchGroup()
            done.enter()
            DispatchQueue.global().async {
                DispatchQueue.concurrentPerform(iterations: count) { offset in
                    let reply = FairnessProcessTests.http(
                        "POST", port: port, "/v1/datasets/todos/push", token: token, body: bodies[offset], key: "b\(first + offset)", timeout: 10)
                    if reply.status != 200 { failed.withLockedValue { $0.append(first + offset) } }
                }
                done.leave()
            }
            // Killed once a push of this round is in (one entry pulled after the last round's end).
            var polls = 0
            while polls < 2000,
                !FairnessProcessTests.http("GET", port: two.port, "/v1/datasets/todos/pull?limit=1&after=\(cursor)", token: token).body.contains("\"position\"")
            {
                polls += 1
                try await Task.sleep(for: .milliseconds(1))
            }
            one.kill9()
            await withCheckedContinuation { continuation in done.notify(queue: .global()) { continuation.resume() } }
            let retried = failed.withLockedValue { $0 }
            if retried.isEmpty { perRound = min(perRound * 2, 320) } else { cut += 1 }
            let statuses = NIOLockedValueBox<[Int]>([])
            let twoPort = two.port
            let refused = try await FairnessProcessTests.onThread {
                retried.filter { b in
                    !Self.pushUntilAccepted(
                        [twoPort], token: token, body: bodies[b - first], key: "b\(b)", statuses: statuses, deadline: .now + .seconds(30))
                }
            }
            #expect(refused.isEmpty, "round \(round): \(refused) retried on the other node: \(statuses.withLockedValue { $0 })")
            one = try ServerProcessTests.startServer("", database: database)
            let end = FairnessProcessTests.http("GET", port: two.port, "/v1/datasets/todos/pull?limit=100000&after=\(cursor)", token: token)
            cursor = try JSONDecoder().decode(PullResponse.self, from: Data(end.body.utf8)).nextCursor
        }
        let ports = [one.port, two.port]
        let counts = Self.batchCounts(try await FairnessProcessTests.onThread { try Self.pullAll(ports, token: token, limit: 500) })
        #expect(counts.count == sent, "every push is in the log")
        #expect(counts.filter { $0.value != size }.isEmpty, "a push is half applied or doubled: \(counts.filter { $0.value != size })")
        #expect(cut > 0, "no kill cut a push off: the test proved nothing")
    }

    /// PostgreSQL stopped for two seconds, then killed -9 and recovered, while 4 clients push
    /// through both nodes (retrying with their keys): meanwhile the nodes answer 503 (and
    /// /health 503), never another error; afterwards they serve again without a restart,
    /// and every push is in the log exactly once.
    @Test func postgresStoppedUnderLoadMeans503ThenTheNodesRecoverAndNothingIsLost() async throws {
        let script = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appending(path: "Scripts/postgres.sh").path(percentEncoded: false)
        // A cluster of its own: the other suites' databases stay up.
        let started = try ServerProcessTests.run("/bin/bash", [script, "start"]).output.split(separator: " ").map { String($0).trimmingCharacters(in: .whitespacesAndNewlines) }
        let (directory, url) = (try #require(started.first), try #require(started.last))
        defer { _ = try? ServerProcessTests.run("/bin/bash", [script, "stop", directory]) }
        let token = try ServerProcessTests.setUp("", database: url)
        let one = try ServerProcessTests.startServer("", database: url)
        let two = try ServerProcessTests.startServer("", database: url)
        defer {
            for node in [one, two] {
                node.process.terminate()
                node.process.waitUntilExit()
            }
        }
        #expect(FairnessProcessTests.http("PUT", port: one.port, "/v1/datasets/todos", token: token).status == 201)
        #expect(FairnessProcessTests.http("PUT", port: one.port, "/v1/datasets/todos/schema", token: token, body: try ServerHarness.schema.canonicalJSON()).status == 201)
        let pushers = 4
        let pushes = 40
        let size = 10
        let statuses = NIOLockedValueBox<[Int]>([])
        let accepted = NIOLockedValueBox(0)
        let done = DispatchGroup()
        done.enter()
        let ports = [one.port, two.port]
        DispatchQueue.global().async {
            DispatchQueue.concurrentPerform(iterations: pushers) { pusher in
                for k in 0..<pushes {
                    let body = try! Self.batch("p\(pusher)k\(k)", first: (pusher * pushes + k) * size, size: size)
                    if Self.pushUntilAccepted(
                        pusher.isMultiple(of: 2) ? ports : ports.reversed(), token: token, body: body, key: "p\(pusher)k\(k)", statuses: statuses,
                        deadline: .now + .seconds(60))
                    {
                        accepted.withLockedValue { $0 += 1 }
                    }
                    Thread.sleep(forTimeInterval: 0.03)
                }
            }
            done.leave()
        }
        try await Task.sleep(for: .milliseconds(500))
        #expect(try ServerProcessTests.run("/bin/bash", [script, "halt", directory]).status == 0)
        try await Task.sleep(for: .seconds(6))  // past the nodes' wait for a connection (5 s)
        let healthDown = ports.map { FairnessProcessTests.http("GET", port: $0, "/health", token: "").status }
        #expect(healthDown == [503, 503], "health while PostgreSQL is down")
        #expect(try ServerProcessTests.run("/bin/bash", [script, "resume", directory]).status == 0)
        try await Task.sleep(for: .seconds(1))
        #expect(try ServerProcessTests.run("/bin/bash", [script, "kill", directory]).status == 0)
        await withCheckedContinuation { continuation in done.notify(queue: .global()) { continuation.resume() } }
        let seen = Dictionary(grouping: statuses.withLockedValue { $0 }, by: { $0 }).mapValues(\.count)
        #expect(Set(seen.keys).isSubset(of: [200, 503]), "only 200 and 503 while PostgreSQL was away: \(seen)")
        #expect(seen[503, default: 0] > 0, "the outage was seen: \(seen)")
        #expect(accepted.withLockedValue { $0 } == pushers * pushes, "every push accepted in the end: \(seen)")
        #expect(ports.map { FairnessProcessTests.http("GET", port: $0, "/health", token: "").status } == [200, 200], "both nodes serve again")
        let counts = Self.batchCounts(try await FairnessProcessTests.onThread { try Self.pullAll(ports, token: token, limit: 1000) })
        #expect(counts.count == pushers * pushes && counts.values.allSatisfy { $0 == size }, "every push once, whole: \(counts.count) pushes, \(counts.filter { $0.value != size })")
    }
}

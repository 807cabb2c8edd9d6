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
        DispatchQueue.concurrentPerform(iterations: pushers) { pusher in
            for push in 0..<pushes {
                let stamp = ServerHarness.stamp(UInt64(Date().timeIntervalSince1970 * 1000))
                let changes = (0..<size).map { ServerHarness.insert("todos", (pusher * pushes + push) * size + $0, title: "p\(pusher)-\(push)-\($0)", at: stamp) }
                let body = try! JSONEncoder().encode(PushRequest(schemaVersion: 1, changes: changes))
                let reply = FairnessProcessTests.http("POST", port: ports[pusher % 2], "/v1/datasets/todos/push", token: token, body: body, key: "p\(pusher)-\(push)")
                statuses.withLockedValue { $0.append(reply.status) }
            }
        }
        #expect(statuses.withLockedValue { $0 }.allSatisfy { $0 == 200 }, "\(statuses.withLockedValue { Dictionary(grouping: $0, by: { $0 }).mapValues(\.count) })")
        let total = pushers * pushes * size
        var orders: [[String]] = []
        for limit in [1, 7, 100] {
            for first in [0, 1] {
                let entries = try Self.pullAll(first == 0 ? ports : ports.reversed(), token: token, limit: limit)
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
}

import Foundation
import Logging
import Testing
@testable import TandemServer
import TandemServerPostgres

/// Two ``PostgresServerStorage``s on one database, each with its own pool: two server nodes,
/// in one process. What must hold across nodes: the log's order and idempotency.
@Suite("PostgreSQL storage: two nodes on one database", .enabled(if: PostgresTestCluster.url != nil))
struct PostgresStorageTests {
    /// Two nodes and the id of `ann`'s dataset `d`, made through the first.
    static func nodes() async throws -> (one: PostgresServerStorage, two: PostgresServerStorage, dataset: Int64) {
        let url = try await PostgresTestCluster.newDatabase()
        let one = try await PostgresServerStorage(
            url: url, maxConnections: 8, leaseDeadline: PostgresTestCluster.leaseDeadline, operationDeadline: PostgresTestCluster.operationDeadline, logger: Logger(label: "node-1"))
        let two = try await PostgresServerStorage(
            url: url, maxConnections: 8, leaseDeadline: PostgresTestCluster.leaseDeadline, operationDeadline: PostgresTestCluster.operationDeadline, logger: Logger(label: "node-2"))
        #expect(one.cursorKey == two.cursorKey, "both nodes make and read the same cursors")
        let user = try await one.addUser(name: "ann", now: 0)
        _ = try await one.createDataset(owner: user.id, name: "d", now: 0, limit: 10)
        return (one, two, try #require(try await two.datasetID(owner: user.id, name: "d")))
    }

    /// A push of `size` log entries, `{"p":P,"b":B,"i":I}`; `fails`: it throws after writing
    /// them to its workspace (the transaction rolls back).
    static func job(_ pusher: Int, _ push: Int, size: Int, fails: Bool = false) -> PushJob {
        PushJob(changes: size) { workspace in
            for i in 0..<size { _ = workspace.appendLog(json: Array(#"{"p":\#(pusher),"b":\#(push),"i":\#(i)}"#.utf8)[...], schemaVersion: 1) }
            if fails { throw PushRefusal.wrongEntity(record: "x", stored: "A", sent: "B") }
            return Data("{\"pusher\":\(pusher),\"push\":\(push)}".utf8)
        }
    }

    /// The entries of a pulled page: (position, `p-b-i`).
    static func entries(_ page: PulledPage) throws -> [(position: Int64, id: String)] {
        let array = try #require(try JSONSerialization.jsonObject(with: Data(page.json)) as? [[String: Any]])
        return try array.map { entry in
            let change = try #require(entry["change"] as? [String: Int])
            return (Int64(try #require(entry["position"] as? Int)), "\(change["p"]!)-\(change["b"]!)-\(change["i"]!)")
        }
    }

    /// 8 pushers split across the nodes (one in five of one pusher's pushes failing and
    /// rolling back) while a reader on each node pulls pages of 7: every page a reader gets
    /// starts right after its cursor with no gap (a reader never passes a position whose
    /// push has not committed), and at the end the log holds every entry of every push that
    /// succeeded exactly once, at positions 1…N.
    @Test func pushesFromTwoNodesGetGaplessPositionsThatNoReaderPasses() async throws {
        let (one, two, dataset) = try await Self.nodes()
        let pushers = 8
        let pushes = 15
        let size = 5
        let failing = Set(stride(from: 0, to: pushes, by: 5))  // pusher 0's failing pushes
        let total = (pushers * pushes - failing.count) * size
        let pulled = try await withThrowingTaskGroup(of: [String]?.self) { group in
            for pusher in 0..<pushers {
                group.addTask {
                    let node = pusher.isMultiple(of: 2) ? one : two
                    for push in 0..<pushes {
                        let fails = pusher == 0 && failing.contains(push)
                        do {
                            let stored = try await node.push(
                                dataset: dataset, key: "p\(pusher)-\(push)", requestHash: "h", now: 0, changes: size,
                                job: Self.job(pusher, push, size: size, fails: fails))
                            #expect(!fails && !stored.replayed)
                        } catch is PushRefusal {
                            #expect(fails)
                        }
                    }
                    return nil
                }
            }
            for reader in [one, two] {
                group.addTask {
                    var after: Int64 = 0
                    var seen: [String] = []
                    let deadline = ContinuousClock.now + .seconds(120)
                    while seen.count < total && ContinuousClock.now < deadline {
                        let page = try await reader.pullJSON(dataset: dataset, after: after, limit: 7, maxBytes: 1 << 20)
                        let entries = try Self.entries(page)
                        let positions = entries.map(\.position)
                        #expect(positions == Array((after + 1)..<(after + 1 + Int64(entries.count))), "a reader after \(after) got \(positions)")
                        guard positions == Array((after + 1)..<(after + 1 + Int64(entries.count))) else { return seen }
                        seen += entries.map(\.id)
                        after = page.lastPosition ?? after
                        if entries.isEmpty { try await Task.sleep(for: .milliseconds(2)) }
                    }
                    return seen
                }
            }
            var lists: [[String]] = []
            for try await list in group { if let list { lists.append(list) } }
            return lists
        }
        #expect(pulled.count == 2)
        for list in pulled {
            #expect(list.count == total)
            #expect(Set(list).count == total, "an entry was read twice")
        }
        #expect(pulled.first == pulled.last, "both nodes read one order")
        let head = try await one.logHead(dataset: dataset)
        #expect(head == Int64(total), "positions 1…\(total) with no gap left by the pushes that rolled back")
        // Each push's entries are together, in its own order.
        let ids = try #require(pulled.first)
        for start in stride(from: 0, to: ids.count, by: size) {
            let batch = ids[start..<start + size].map { $0.split(separator: "-") }
            #expect(Set(batch.map { "\($0[0])-\($0[1])" }).count == 1 && batch.map { $0[2] } == (0..<size).map { "\($0)"[...] })
        }
    }

    /// The same Idempotency-Key sent to both nodes at once, ten times over: each key is applied
    /// once, and the other node answers the stored answer (replayed).
    @Test func aKeySentToBothNodesAtOnceIsAppliedOnceAndReplayedByTheOther() async throws {
        let (one, two, dataset) = try await Self.nodes()
        for round in 0..<10 {
            async let first = one.push(dataset: dataset, key: "k\(round)", requestHash: "h", now: 0, changes: 3, job: Self.job(round, 0, size: 3))
            async let second = two.push(dataset: dataset, key: "k\(round)", requestHash: "h", now: 0, changes: 3, job: Self.job(round, 1, size: 3))
            let answers = try await [first, second]
            #expect(answers.filter(\.replayed).count == 1, "round \(round)")
            #expect(answers[0].response == answers[1].response, "the replay is the first answer")
        }
        #expect(try await two.logHead(dataset: dataset) == 30)
    }

    /// Two nodes of one version starting at once on a new database: one makes the layout,
    /// the other waits for it and finds it made (the migration lock).
    @Test func nodesStartingTogetherOnANewDatabaseMigrateItOnce() async throws {
        let url = try await PostgresTestCluster.newDatabase()
        async let first = PostgresServerStorage(
            url: url, maxConnections: 2, leaseDeadline: PostgresTestCluster.leaseDeadline, operationDeadline: PostgresTestCluster.operationDeadline, logger: Logger(label: "node-1"))
        async let second = PostgresServerStorage(
            url: url, maxConnections: 2, leaseDeadline: PostgresTestCluster.leaseDeadline, operationDeadline: PostgresTestCluster.operationDeadline, logger: Logger(label: "node-2"))
        let (one, two) = try await (first, second)
        #expect(one.cursorKey == two.cursorKey)
        #expect(one.epoch == two.epoch && one.epoch != 0, "nodes on one database hand out the same cursors")
        _ = try await one.addUser(name: "ann", now: 0)
        #expect(try await two.user(named: "ann") != nil)
        // A node restarted on the same database keeps the epoch: its clients do not resync.
        let again = try await PostgresServerStorage(
            url: url, maxConnections: 2, leaseDeadline: PostgresTestCluster.leaseDeadline, operationDeadline: PostgresTestCluster.operationDeadline, logger: Logger(label: "node-3"))
        #expect(again.epoch == one.epoch && again.newEpochReason == nil)
        // A new epoch started through one node is what a node opened later reads.
        let newer = try await one.startNewEpoch()
        let later = try await PostgresServerStorage(
            url: url, maxConnections: 2, leaseDeadline: PostgresTestCluster.leaseDeadline, operationDeadline: PostgresTestCluster.operationDeadline, logger: Logger(label: "node-4"))
        #expect(later.epoch == newer && newer != again.epoch)
        for node in [one, two, again, later] { node.close() }
    }
}

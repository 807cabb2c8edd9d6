import Foundation
import NIOConcurrencyHelpers
import Testing
@testable import TandemServer
import TandemWire

@Suite("Group commit")
struct GroupCommitterTests {
    struct Planted: Error, Equatable { var job: Int }

    @Test func jobsThatQueueDuringABatchRunTogetherAndEachGetsItsOwnAnswer() async throws {
        let batches = NIOLockedValueBox<[[Int]]>([])
        let committer = GroupCommitter<Int, Int>(maxBatch: 8) { jobs in
            batches.withLockedValue { $0.append(jobs) }
            try await Task.sleep(for: .milliseconds(20))
            return jobs.map { $0 % 5 == 0 ? .failure(Planted(job: $0)) : .success($0 * 10) }
        }
        let results = await withTaskGroup(of: (Int, Result<Int, Planted>).self) { group in
            for job in 1...40 {
                group.addTask {
                    do { return (job, .success(try await committer.submit(job))) } catch { return (job, .failure(error as! Planted)) }
                }
            }
            var results: [Int: Result<Int, Planted>] = [:]
            for await (job, result) in group { results[job] = result }
            return results
        }
        for job in 1...40 {
            #expect(results[job] == (job % 5 == 0 ? .failure(Planted(job: job)) : .success(job * 10)))
        }
        let seen = batches.withLockedValue { $0 }
        #expect(seen.flatMap { $0 }.sorted() == Array(1...40), "every job ran exactly once")
        #expect(seen.allSatisfy { $0.count <= 8 })
        #expect(seen.count < 40, "jobs that queued ran together: \(seen.map(\.count))")
    }

    /// Jobs are weighed (the server: a push by its changes): a batch stops before the job
    /// that would take it past `maxWeight`, and a job heavier than that runs alone.
    @Test func aBatchHoldsJobsUpToTheirWeight() async throws {
        let batches = NIOLockedValueBox<[[Int]]>([])
        let gate = NIOLockedValueBox(false)
        let committer = GroupCommitter<Int, Int>(maxBatch: 32, maxWeight: 10, weight: { $0 }) { jobs in
            batches.withLockedValue { $0.append(jobs) }
            // The first batch (job 1 alone) holds the writer until every other job queued.
            while !gate.withLockedValue({ $0 }) { try await Task.sleep(for: .milliseconds(1)) }
            return jobs.map { .success($0) }
        }
        let first = Task { try await committer.submit(1) }
        while batches.withLockedValue({ $0.isEmpty }) { try await Task.sleep(for: .milliseconds(1)) }
        var others: [Task<Int, any Error>] = []
        for (index, job) in [4, 5, 3, 12, 2].enumerated() {
            others.append(Task { try await committer.submit(job) })
            // Queued in this order: each waits until the one before it is in the queue.
            while await committer.queued < index + 1 { try await Task.sleep(for: .milliseconds(1)) }
        }
        gate.withLockedValue { $0 = true }
        _ = try await first.value
        for task in others { _ = try await task.value }
        #expect(batches.withLockedValue { $0 } == [[1], [4, 5], [3], [12], [2]])
    }

    @Test func whenABatchFailsAsAWholeEveryJobInItGetsTheErrorAndLaterBatchesStillRun() async throws {
        let calls = NIOLockedValueBox(0)
        let committer = GroupCommitter<Int, Int>(maxBatch: 100) { jobs in
            let call = calls.withLockedValue {
                $0 += 1; return $0
            }
            if call == 1 { throw Planted(job: -1) }
            return jobs.map { .success($0) }
        }
        await #expect(throws: Planted(job: -1)) { try await committer.submit(1) }
        #expect(try await committer.submit(2) == 2)
    }

    /// Pushes that share a transaction stay all or nothing each: the failing ones leave no
    /// log entry, their neighbours are applied.
    @Test func aFailingPushInAGroupLeavesNothingAndItsNeighboursAreApplied() async throws {
        let harness = try await ServerHarness.make(.sqlite)
        let storage = harness.storage
        let owner = try #require(try await storage.user(named: "ann")).id
        _ = try await storage.createDataset(owner: owner, name: "d", now: 0, limit: 10)
        let dataset = try #require(try await storage.datasetID(owner: owner, name: "d"))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for push in 0..<60 {
                group.addTask {
                    do {
                        let job = PushJob { workspace in
                            for n in 0..<5 {
                                let change = ServerHarness.insert("d", push * 10 + n)
                                _ = workspace.appendLog(change, schemaVersion: 1)
                                if push % 3 == 0 && n == 3 { throw Planted(job: push) }
                            }
                            return Data("{}".utf8)
                        }
                        _ = try await storage.push(dataset: dataset, key: "k\(push)", requestHash: "h", now: 0, changes: 1, job: job)
                        #expect(push % 3 != 0)
                    } catch {
                        #expect(error as? Planted == Planted(job: push))
                    }
                }
            }
            try await group.waitForAll()
        }
        let (entries, _) = try await storage.pull(dataset: dataset, after: 0, limit: 1000)
        let pushes = Set(entries.map { (Int($0.change.record.suffix(12))! / 10) })
        #expect(entries.count == 40 * 5)
        #expect(entries.map(\.position) == (1...200).map(Int64.init), "positions follow each other, whatever push failed in the same transaction")
        #expect(pushes == Set((0..<60).filter { $0 % 3 != 0 }))
        // A failed push's key was not stored: retrying it applies it.
        let retried = try await storage.push(dataset: dataset, key: "k0", requestHash: "h", now: 0, changes: 1, job: PushJob { _ in Data("{}".utf8) })
        #expect(!retried.replayed)
    }
}

@Suite("Maintenance")
struct MaintenanceTests {
    @Test(arguments: StorageKind.allCases)
    func expiredIdempotencyKeysArePrunedAndALateRetryChangesNothing(_ kind: StorageKind) async throws {
        let clock = NIOLockedValueBox<Int64>(1_800_000_000_000)
        let harness = try await ServerHarness.make(
            kind, configure: { $0.idempotencyRetentionMilliseconds = 60_000 },
            now: { clock.withLockedValue { $0 } })
        let maintenance = MaintenanceService(dependencies: harness.dependencies, logger: .init(label: "test"))
        try await harness.run { client in
            try await client.setUp("d", token: harness.ann)
            let push = PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("d", 1), ServerHarness.insert("d", 2)])
            #expect(try await client.push("d", token: harness.ann, key: "old", push).status == .ok)
            clock.withLockedValue { $0 += 30_000 }
            #expect(try await client.push("d", token: harness.ann, key: "new", PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("d", 3)])).status == .ok)
            #expect(try await maintenance.runOnce() == 0)
            clock.withLockedValue { $0 += 31_000 }
            #expect(try await maintenance.runOnce() == 1, "only the answer older than 60 s goes")
            let late = try await client.push("d", token: harness.ann, key: "old", push)
            #expect(late.status == .ok)
            #expect(try late.decode(PushResponse.self).outcomes.allSatisfy { $0.position == nil && $0.applied.isEmpty })
            #expect(try await client.pullAll("d", token: harness.ann, limit: 100).count == 3)
            let replay = try await client.push("d", token: harness.ann, key: "new", PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("d", 3)]))
            #expect(try replay.decode(PushResponse.self).outcomes.first?.position != nil, "the newer answer is still replayed")
        }
    }
}

import Foundation
import NIOConcurrencyHelpers
import Testing
import TandemServer
@testable import TandemServerPostgres

/// The per-dataset gate, with no database: one batch per dataset at a time, in arrival
/// order, pushes that queued meanwhile batched together, other datasets not held up, and a
/// bounded wait.
struct DatasetGateTests {
    /// Runs `jobs` as the gate's batch: records it, and answers each job's number doubled.
    static func recording(
        _ log: NIOLockedValueBox<[[Int]]>, inside: NIOLockedValueBox<Int>, hold: Duration = .milliseconds(20)
    )
        -> @Sendable ([Int]) async -> [Result<Int, any Error>]
    {
        { jobs in
            let now = inside.withLockedValue {
                $0 += 1
                return $0
            }
            #expect(now == 1, "two batches of one dataset at once")
            log.withLockedValue { $0.append(jobs) }
            try? await Task.sleep(for: hold)
            inside.withLockedValue { $0 -= 1 }
            return jobs.map { .success($0 * 2) }
        }
    }

    @Test func pushesThatQueueRunAsTheNextBatchInArrivalOrderAndOtherDatasetsRunBeside() async throws {
        let gate = DatasetGate<Int, Int>(maxBatch: 3, maxWeight: 100, weight: { $0 == 99 ? 100 : 1 })
        let log = NIOLockedValueBox<[[Int]]>([])
        let inside = NIOLockedValueBox(0)
        let other = NIOLockedValueBox<[[Int]]>([])
        let answers = NIOLockedValueBox<[Int: Int]>([:])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, job) in [0, 1, 2, 3, 4, 99, 5].enumerated() {
                group.addTask {
                    let answer = try await gate.submit(job, to: 1, deadline: .seconds(300), Self.recording(log, inside: inside, hold: .milliseconds(200)))
                    answers.withLockedValue { $0[job] = answer }
                }
                // Arrival order: each is in a batch or in the queue before the next is sent.
                while await log.withLockedValue({ $0.joined().count }) + gate.queued(1) < index + 1 { try await Task.sleep(for: .milliseconds(1)) }
            }
            group.addTask { _ = try await gate.submit(7, to: 2, deadline: .seconds(30), Self.recording(other, inside: NIOLockedValueBox(0))) }
            try await group.waitForAll()
        }
        let batches = log.withLockedValue { $0 }
        #expect(batches.first == [0], "the first push finds the dataset free and runs alone")
        #expect(batches.flatMap { $0 } == [0, 1, 2, 3, 4, 99, 5], "every push once, in arrival order")
        #expect(batches.allSatisfy { $0.count <= 3 }, "at most maxBatch per batch")
        #expect(batches.contains([99]), "a push heavier than the batch's weight runs alone: \(batches)")
        #expect(batches.count < 7, "pushes that queued went together: \(batches)")
        #expect(answers.withLockedValue { $0 } == Dictionary(uniqueKeysWithValues: [0, 1, 2, 3, 4, 99, 5].map { ($0, $0 * 2) }), "each its own answer")
        #expect(other.withLockedValue { $0 } == [[7]])
    }

    @Test func aPushWaitingPastItsDeadlineIsRefusedAndTheNextGoesOn() async throws {
        let gate = DatasetGate<Int, Int>(maxBatch: 4)
        let entered = NIOLockedValueBox(false)
        let release = NIOLockedValueBox(false)
        async let holder = gate.submit(1, to: 1, deadline: .seconds(30)) { jobs in
            entered.withLockedValue { $0 = true }
            while !release.withLockedValue({ $0 }) { try? await Task.sleep(for: .milliseconds(5)) }
            return jobs.map { .success($0) }
        }
        while !entered.withLockedValue({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
        await #expect(throws: StorageError.self) {
            try await gate.submit(2, to: 1, deadline: .milliseconds(50)) { jobs in jobs.map { .success($0) } }
        }
        release.withLockedValue { $0 = true }
        #expect(try await holder == 1)
        let after = try await gate.submit(7, to: 1, deadline: .seconds(30)) { jobs in jobs.map { .success($0) } }
        #expect(after == 7, "the gate is free once the holder leaves")
    }

    /// A job's own failure reaches it alone; the others of its batch get their answers.
    @Test func aFailureInABatchReachesOnlyItsPush() async throws {
        let gate = DatasetGate<Int, Int>(maxBatch: 8)
        let release = NIOLockedValueBox(false)
        struct Refused: Error {}
        let run: @Sendable ([Int]) async -> [Result<Int, any Error>] = { jobs in
            while !release.withLockedValue({ $0 }) { try? await Task.sleep(for: .milliseconds(5)) }
            return jobs.map { $0 == 2 ? .failure(Refused()) : .success($0) }
        }
        async let first = gate.submit(0, to: 1, deadline: .seconds(30), run)
        try await Task.sleep(for: .milliseconds(20))
        async let second = gate.submit(1, to: 1, deadline: .seconds(30), run)
        async let third: Bool = {
            do {
                _ = try await gate.submit(2, to: 1, deadline: .seconds(30), run)
                return false
            } catch { return error is Refused }
        }()
        async let fourth = gate.submit(3, to: 1, deadline: .seconds(30), run)
        try await Task.sleep(for: .milliseconds(20))
        release.withLockedValue { $0 = true }
        let answers = (try await first, try await second, await third, try await fourth)
        #expect(answers.0 == 0 && answers.1 == 1 && answers.3 == 3)
        #expect(answers.2, "the failing push gets its own error")
    }

    /// The push leading a batch whose request goes away (its client timed out) does not take
    /// the batch down: the others of its batch get their answers.
    @Test func aBatchOutlivesItsLeadersCancellation() async throws {
        let gate = DatasetGate<Int, Int>(maxBatch: 8)
        let release = NIOLockedValueBox(false)
        let started = NIOLockedValueBox(0)
        let run: @Sendable ([Int]) async -> [Result<Int, any Error>] = { jobs in
            started.withLockedValue { $0 += 1 }
            while !release.withLockedValue({ $0 }) { try? await Task.sleep(for: .milliseconds(5)) }
            // Cancellation would end the sleep at once and show here.
            try? await Task.sleep(for: .milliseconds(20))
            return jobs.map { Task.isCancelled ? .failure(CancellationError()) : .success($0) }
        }
        async let first = gate.submit(0, to: 1, deadline: .seconds(30), run)
        while started.withLockedValue({ $0 }) == 0 { try await Task.sleep(for: .milliseconds(5)) }
        let leader = Task { try await gate.submit(1, to: 1, deadline: .seconds(30), run) }
        try await Task.sleep(for: .milliseconds(20))
        async let follower = gate.submit(2, to: 1, deadline: .seconds(30), run)
        try await Task.sleep(for: .milliseconds(20))
        release.withLockedValue { $0 = true }
        while started.withLockedValue({ $0 }) < 2 { try await Task.sleep(for: .milliseconds(5)) }
        leader.cancel()
        #expect(try await first == 0)
        #expect(try await follower == 2, "the follower's answer, whatever became of the leader's request")
        _ = try? await leader.value
    }
}

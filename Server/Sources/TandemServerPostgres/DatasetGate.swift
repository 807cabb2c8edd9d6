import TandemServer

/// Lets one batch of pushes per dataset at a time, on this node, take a database connection:
/// the others wait here, in arrival order, holding nothing. Pushes to one dataset run one
/// after the other anyway (each locks the dataset's row), and without the gate those waiting
/// for the lock would each hold a pool connection, so one tenant's busy dataset could take
/// every connection of the node from the others. With it a dataset holds at most one
/// connection per node (plus one waiting for its row lock per other node).
///
/// Pushes that queued while a batch ran go together as the next batch (group commit): the
/// first of them runs the batch for all, in one transaction, and hands each its result. A
/// batch holds at most `maxBatch` jobs weighing `maxWeight` together (a heavier job runs
/// alone).
///
/// ```swift
/// let gate = DatasetGate<Push, StoredPush>(maxBatch: 16, maxWeight: 2_000, weight: \.changes)
/// let stored = try await gate.submit(push, to: dataset, deadline: .seconds(5)) { pushes in
///     await runInOneTransaction(pushes)   // one result per push, in order
/// }
/// ```
actor DatasetGate<Job: Sendable, Output: Sendable> {
    private enum Admission {
        /// Run `jobs` (this waiter's first) and resume the others with their results.
        case lead(followers: [Waiter])
        case done(Result<Output, any Error>)
        case expired
    }

    private struct Waiter {
        var id: Int
        var job: Job
        var admitted: CheckedContinuation<Admission, Never>
    }

    private let maxBatch: Int
    private let maxWeight: Int
    private let weight: @Sendable (Job) -> Int
    private var busy: Set<Int64> = []
    private var waiting: [Int64: [Waiter]] = [:]
    private var nextID = 0

    init(maxBatch: Int = 1, maxWeight: Int = .max, weight: @escaping @Sendable (Job) -> Int = { _ in 1 }) {
        precondition(maxBatch >= 1)
        self.maxBatch = maxBatch
        self.maxWeight = maxWeight
        self.weight = weight
    }

    /// The pushes of `dataset` waiting for its turn (tests wait on it instead of sleeping).
    func queued(_ dataset: Int64) -> Int { waiting[dataset]?.count ?? 0 }

    /// Runs `job` in a batch of `dataset`'s pushes once no other batch of it runs on this
    /// node. `run` answers one result per job, in order.
    ///
    /// - Throws: ``StorageError/unavailable(_:)`` when the dataset's turn did not come within
    ///   `deadline` (the pushes before it are stuck: PostgreSQL is away or overloaded), and
    ///   what the job's part of the batch threw.
    func submit(
        _ job: Job, to dataset: Int64, deadline: Duration, _ run: @escaping @Sendable ([Job]) async -> [Result<Output, any Error>]
    ) async throws -> Output {
        let followers: [Waiter]
        if busy.insert(dataset).inserted {
            followers = []
        } else {
            switch await wait(job, for: dataset, deadline: deadline) {
            case .expired: throw StorageError.unavailable("pushes to this dataset are queued on this server for more than \(deadline); retry later")
            case .done(let result): return try result.get()
            case .lead(let taken): followers = taken
            }
        }
        // In a task of its own: the batch is every follower's too, so the leader's request
        // going away (its client timed out) must not cancel it.
        let jobs = [job] + followers.map(\.job)
        let results = await Task { await run(jobs) }.value
        precondition(results.count == followers.count + 1, "DatasetGate: run must answer once per job")
        for (follower, result) in zip(followers, results.dropFirst()) { follower.admitted.resume(returning: .done(result)) }
        leave(dataset)
        return try results[0].get()
    }

    private func wait(_ job: Job, for dataset: Int64, deadline: Duration) async -> Admission {
        nextID += 1
        let id = nextID
        let timer = Task {
            try await Task.sleep(for: deadline)
            self.expire(dataset, id)
        }
        defer { timer.cancel() }
        // A push whose request is cancelled (its client left, the server stops) leaves the
        // queue; once taken into a batch it waits for the batch's answer.
        return await withTaskCancellationHandler {
            await withCheckedContinuation { waiting[dataset, default: []].append(Waiter(id: id, job: job, admitted: $0)) }
        } onCancel: {
            Task { await self.expire(dataset, id) }
        }
    }

    /// Gives up waiter `id`'s wait, if it still waits.
    private func expire(_ dataset: Int64, _ id: Int) {
        guard let index = waiting[dataset]?.firstIndex(where: { $0.id == id }) else { return }
        let waiter = waiting[dataset]!.remove(at: index)
        if waiting[dataset]!.isEmpty { waiting[dataset] = nil }
        waiter.admitted.resume(returning: .expired)
    }

    /// Hands the dataset to the pushes waiting for it (the first leads their batch), or frees it.
    private func leave(_ dataset: Int64) {
        guard var queue = waiting[dataset], !queue.isEmpty else {
            busy.remove(dataset)
            return
        }
        var taken = 1
        var total = weight(queue[0].job)
        while taken < min(maxBatch, queue.count) {
            let next = weight(queue[taken].job)
            if total + next > maxWeight { break }
            total += next
            taken += 1
        }
        let batch = Array(queue.prefix(taken))
        queue.removeFirst(taken)
        waiting[dataset] = queue.isEmpty ? nil : queue
        batch[0].admitted.resume(returning: .lead(followers: Array(batch.dropFirst())))
    }
}

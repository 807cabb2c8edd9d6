/// Gathers jobs that arrive while a batch is running and runs them together as the next
/// batch: SQLite has one writer, so pushes queue anyway, and one transaction for the pushes
/// that queued up costs one commit instead of one each (group commit). A job's answer comes
/// back only after its batch ran.
///
/// ```swift
/// let committer = GroupCommitter<Push, StoredPush>(maxBatch: 64) { pushes in
///     try await pool.write { db in pushes.map { push in Result { try apply(push, db) } } }
/// }
/// let stored = try await committer.submit(push)
/// ```
///
/// `run` answers one result per job, in order; when `run` itself throws, every job of the
/// batch gets that error. A batch holds at most `maxBatch` jobs, and jobs weighing at most
/// `maxWeight` together (a job heavier than that runs alone): the server weighs a push by
/// its changes, so a group of large pushes stays one transaction of bounded size.
actor GroupCommitter<Job: Sendable, Output: Sendable> {
    private let maxBatch: Int
    private let maxWeight: Int
    private let weight: @Sendable (Job) -> Int
    private let run: @Sendable ([Job]) async throws -> [Result<Output, any Error>]
    private var pending: [(job: Job, continuation: CheckedContinuation<Output, any Error>)] = []
    private var draining = false

    init(
        maxBatch: Int, maxWeight: Int = .max, weight: @escaping @Sendable (Job) -> Int = { _ in 1 },
        run: @escaping @Sendable ([Job]) async throws -> [Result<Output, any Error>]
    ) {
        precondition(maxBatch >= 1)
        self.maxBatch = maxBatch
        self.maxWeight = maxWeight
        self.weight = weight
        self.run = run
    }

    /// The jobs queued for a later batch (tests wait on it instead of sleeping).
    var queued: Int { pending.count }

    /// Queues `job` and returns its result once the batch that contains it ran.
    ///
    /// - Throws: what the job's own part of the batch threw, or what `run` threw.
    func submit(_ job: Job) async throws -> Output {
        try await withCheckedThrowingContinuation { continuation in
            pending.append((job, continuation))
            if !draining {
                draining = true
                Task { await drain() }
            }
        }
    }

    private func drain() async {
        while !pending.isEmpty {
            var taken = 0
            var total = 0
            for entry in pending.prefix(maxBatch) {
                let next = weight(entry.job)
                if taken > 0 && total + next > maxWeight { break }
                taken += 1
                total += next
            }
            let batch = Array(pending.prefix(taken))
            pending.removeFirst(batch.count)
            do {
                let results = try await run(batch.map(\.job))
                precondition(results.count == batch.count, "GroupCommitter: run must answer once per job")
                for (entry, result) in zip(batch, results) { entry.continuation.resume(with: result) }
            } catch {
                for entry in batch { entry.continuation.resume(throwing: error) }
            }
        }
        draining = false
    }
}

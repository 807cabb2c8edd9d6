import TandemServer

/// Lets one push per dataset at a time, on this node, take a database connection: the others
/// wait here, in arrival order, holding nothing. Pushes to one dataset run one after the other
/// anyway (each locks the dataset's row), and without the gate those waiting for the lock
/// would each hold a pool connection, so one tenant's busy dataset could take every
/// connection of the node from the others. With it a dataset holds at most one connection per
/// node (plus one waiting for its row lock per other node).
///
/// ```swift
/// let gate = DatasetGate()
/// let stored = try await gate.run(dataset, deadline: .seconds(5)) { try await pushInATransaction() }
/// ```
actor DatasetGate {
    private struct Waiter {
        var id: Int
        var admitted: CheckedContinuation<Bool, Never>
    }

    private var busy: Set<Int64> = []
    private var waiting: [Int64: [Waiter]] = [:]
    private var nextID = 0

    /// Runs `body` once no other push of `dataset` runs on this node.
    ///
    /// - Throws: ``StorageError/unavailable(_:)`` when the dataset's turn did not come within
    ///   `deadline` (the pushes before it are stuck: PostgreSQL is away or overloaded), and
    ///   what `body` throws.
    func run<T: Sendable>(_ dataset: Int64, deadline: Duration, _ body: @Sendable () async throws -> T) async throws -> T {
        guard await enter(dataset, deadline: deadline) else {
            throw StorageError.unavailable("pushes to this dataset are queued on this server for more than \(deadline); retry later")
        }
        defer { leave(dataset) }
        return try await body()
    }

    private func enter(_ dataset: Int64, deadline: Duration) async -> Bool {
        if busy.insert(dataset).inserted { return true }
        nextID += 1
        let id = nextID
        let timer = Task {
            try await Task.sleep(for: deadline)
            self.expire(dataset, id)
        }
        defer { timer.cancel() }
        // A push whose request is cancelled (its client left, the server stops) leaves the queue.
        return await withTaskCancellationHandler {
            await withCheckedContinuation { waiting[dataset, default: []].append(Waiter(id: id, admitted: $0)) }
        } onCancel: {
            Task { await self.expire(dataset, id) }
        }
    }

    /// Gives up waiter `id`'s wait, if it still waits.
    private func expire(_ dataset: Int64, _ id: Int) {
        guard let index = waiting[dataset]?.firstIndex(where: { $0.id == id }) else { return }
        let waiter = waiting[dataset]!.remove(at: index)
        if waiting[dataset]!.isEmpty { waiting[dataset] = nil }
        waiter.admitted.resume(returning: false)
    }

    /// Hands the dataset to the next push waiting for it, or frees it.
    private func leave(_ dataset: Int64) {
        guard var queue = waiting[dataset], !queue.isEmpty else {
            busy.remove(dataset)
            return
        }
        let next = queue.removeFirst()
        waiting[dataset] = queue.isEmpty ? nil : queue
        next.admitted.resume(returning: true)
    }
}

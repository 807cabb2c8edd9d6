/// Runs CPU-bound work at most `width` at a time; later callers wait their turn, in order.
/// Each owner (a user) has at most one piece of work running or waiting: a second one is
/// refused (``Busy``), so one tenant cannot fill the queue ahead of the others.
///
/// The work itself runs in the caller's task, not on the actor: the actor only counts.
///
/// ```swift
/// let checks = WorkLimiter(width: 1)
/// let report = try await checks.run(for: user.id) { try expensiveCheck() }
/// ```
actor WorkLimiter {
    private let width: Int
    private var running = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []
    /// The owners with work running or waiting.
    private var owners: Set<Int64> = []

    /// Refused: the owner has work running or waiting already.
    struct Busy: Error {}

    init(width: Int) {
        self.width = max(width, 1)
    }

    /// Runs `body` once a place is free.
    ///
    /// - Throws: ``Busy`` at once when `owner` has work running or waiting; what `body`
    ///   throws; `CancellationError` when the task was cancelled while it waited.
    nonisolated func run<T: Sendable>(for owner: Int64? = nil, _ body: @Sendable () throws -> T) async throws -> T {
        try await enter(owner)
        do {
            try Task.checkCancellation()
            let result = try body()
            await leave(owner)
            return result
        } catch {
            await leave(owner)
            throw error
        }
    }

    /// Takes `owner`'s one place ahead of its work (held until ``release(_:)``), so what comes
    /// before the work (reading a body, parsing it) is refused too while the owner has work
    /// running or waiting.
    ///
    /// - Throws: ``Busy`` when `owner` has work running or waiting.
    func reserve(_ owner: Int64) throws {
        guard owners.insert(owner).inserted else { throw Busy() }
    }

    /// Gives back the place ``reserve(_:)`` took.
    func release(_ owner: Int64) {
        owners.remove(owner)
    }

    private func enter(_ owner: Int64?) async throws {
        if let owner { try reserve(owner) }
        if running < width {
            running += 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func leave(_ owner: Int64?) {
        if let owner { owners.remove(owner) }
        if waiting.isEmpty {
            running -= 1
        } else {
            // The place passes to the first waiter: `running` stays.
            waiting.removeFirst().resume()
        }
    }
}

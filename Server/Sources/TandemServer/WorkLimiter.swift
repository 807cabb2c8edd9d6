/// Runs CPU-bound work at most `width` at a time; later callers wait their turn, in order.
///
/// The work itself runs in the caller's task, not on the actor: the actor only counts.
///
/// ```swift
/// let checks = WorkLimiter(width: 1)
/// let report = try await checks.run { try expensiveCheck() }
/// ```
actor WorkLimiter {
    private let width: Int
    private var running = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(width: Int) {
        self.width = max(width, 1)
    }

    /// Runs `body` once a place is free.
    ///
    /// - Throws: what `body` throws, or `CancellationError` when the task was cancelled while
    ///   it waited.
    nonisolated func run<T: Sendable>(_ body: @Sendable () throws -> T) async throws -> T {
        await enter()
        do {
            try Task.checkCancellation()
            let result = try body()
            await leave()
            return result
        } catch {
            await leave()
            throw error
        }
    }

    private func enter() async {
        if running < width {
            running += 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func leave() {
        if waiting.isEmpty {
            running -= 1
        } else {
            // The place passes to the first waiter: `running` stays.
            waiting.removeFirst().resume()
        }
    }
}

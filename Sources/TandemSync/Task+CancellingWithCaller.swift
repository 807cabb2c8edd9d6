extension Task where Failure == any Error {
    /// The task's value, cancelling the task when the caller is cancelled meanwhile (awaiting
    /// `value` alone does not pass the caller's cancellation on): for work the caller started
    /// in a task of its own (a page fetched ahead, a sync the engine runs).
    ///
    /// ```swift
    /// let ahead = Task.detached { try await fetch(next) }
    /// let page = try await ahead.valueCancellingWithCaller()
    /// ```
    ///
    /// - Throws: what the task throws; `CancellationError` when it was cancelled.
    func valueCancellingWithCaller() async throws -> Success {
        try await withTaskCancellationHandler {
            try await value
        } onCancel: {
            cancel()
        }
    }
}

import Foundation
import Tandem

extension SyncEngine {
    /// Syncs until `shouldStop` says so or the task is cancelled: right away, then every
    /// `interval`, and soon after each local change (polled every `pollInterval`). A failed
    /// sync is retried after an exponential backoff with jitter (``Backoff``). `shouldStop`
    /// lets a sync in progress finish before the loop stops; cancelling the task stops the
    /// sync too, where it is (what it saved stays saved, the rest goes in the next sync),
    /// and is not reported as a failure.
    ///
    /// ```swift
    /// let stopping = Atomic(false)   // set by a SIGTERM handler
    /// await engine.run(every: .seconds(30), shouldStop: { stopping.load(ordering: .relaxed) })
    /// ```
    ///
    /// - Parameter onSync: told the outcome of every sync (for logs and status).
    public func run(
        every interval: Duration, pollInterval: Duration = .milliseconds(250), backoff: Backoff = Backoff(),
        shouldStop: @escaping @Sendable () -> Bool = { false },
        onSync: @escaping @Sendable (Result<SyncSummary, SyncError>) -> Void = { _ in }
    ) async {
        var random = SystemRandomNumberGenerator()
        var failures = 0
        while !shouldStop() && !Task.isCancelled {
            let before = (try? container.currentHistoryToken()) ?? .start
            var wait = interval
            do {
                let summary = try await sync()
                failures = 0
                onSync(.success(summary))
            } catch is CancellationError where Task.isCancelled {
                break
            } catch {
                let failure = error as? SyncError ?? SyncError(.store, "\(error)")
                failures += 1
                wait = backoff.delay(afterFailures: failures, retryAfter: failure.retryAfter.map { .milliseconds(Int64($0 * 1000)) }, using: &random)
                logger.warning("sync failed; retrying", metadata: ["error": "\(failure)", "in": "\(wait)"])
                onSync(.failure(failure))
            }
            // Edits made while the sync ran are after `before`: they trigger the next sync.
            let synced = before
            // Wait for the interval, a local change, or the stop.
            let deadline = ContinuousClock.now + wait
            while ContinuousClock.now < deadline, !shouldStop(), !Task.isCancelled {
                try? await Task.sleep(for: min(pollInterval, deadline - ContinuousClock.now))
                if failures == 0, let token = try? container.currentHistoryToken(), token > synced, hasLocalChanges(after: synced) { break }
            }
        }
    }

    /// Whether a transaction after `token` was written by someone other than the sync.
    func hasLocalChanges(after token: HistoryToken) -> Bool {
        var descriptor = HistoryDescriptor.local(after: token)
        descriptor.fetchLimit = 1
        return !((try? container.fetchHistory(descriptor)) ?? []).isEmpty
    }
}

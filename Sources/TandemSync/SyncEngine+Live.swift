import Foundation
import Tandem
import TandemLocking
import TandemWire

extension SyncEngine {
    /// Syncs live until `shouldStop` says so or the task is cancelled: a pull stays waiting
    /// at the server (`pull?wait=`), which answers as soon as another replica pushes, and a
    /// local commit is pushed within about `checkInterval` (four of them after a quiet
    /// spell). A full sync also runs right away, every `interval` as a safety net, and after
    /// every failure (with ``Backoff``'s exponential delay and jitter, or the server's
    /// `Retry-After`); the waiting pull then resumes from the store's cursor. Against a server without live pulls (no `pullWait`
    /// in its capabilities) it syncs every `interval` and after local commits.
    ///
    /// What a waiting pull brings is applied by an ordinary sync (pushes first, then the
    /// page it already holds, then the rest), so every guarantee of ``sync()`` holds.
    ///
    /// ```swift
    /// let stopping = Atomic(false)   // set by a SIGTERM handler
    /// await engine.runLive(every: .seconds(30), shouldStop: { stopping.load(ordering: .relaxed) }) { result in
    ///     if case .success(let summary) = result { print("pulled", summary.pulled) }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - wait: how long one pull waits at the server (cut to the server's maximum); keep
    ///     it under the transport's timeouts (`CurlTransport`: 120 s; `URLSessionTransport`:
    ///     its `idleTimeout`, 60 s).
    ///   - checkInterval: how often the store is checked for local commits while it is
    ///     busy, four times less often after 2 s without one (a cheap check,
    ///     ``StoreChangeWatch``; the journal is read only when something committed).
    ///   - onSync: told the outcome of every sync (for logs, status and UI refreshes).
    public func runLive(
        every interval: Duration = .seconds(30), wait: Duration = .seconds(25), checkInterval: Duration = .milliseconds(25),
        backoff: Backoff = Backoff(), shouldStop: @escaping @Sendable () -> Bool = { false },
        onSync: @escaping @Sendable (Result<SyncSummary, SyncError>) -> Void = { _ in }
    ) async {
        let (events, sink) = AsyncStream.makeStream(of: LiveEvent.self, bufferingPolicy: .bufferingNewest(64))
        let watcher = Task.detached { [container] in
            var watch = StoreChangeWatch(container)
            var lastCommit = ContinuousClock.now
            var sinceTick = Duration.zero
            while !Task.isCancelled {
                // Every `checkInterval` while the store is busy; four times slower once it has
                // been quiet for 2 s (an idle daemon wakes 10 times a second, not 40).
                let pause = ContinuousClock.now - lastCommit < .seconds(2) ? checkInterval : checkInterval * 4
                try? await Task.sleep(for: pause)
                sinceTick += pause
                if watch.changed() {
                    lastCommit = .now
                    sink.yield(.committed)
                } else if sinceTick >= .milliseconds(250) {
                    sinceTick = .zero
                    sink.yield(.tick)  // lets the loop see a stop, a deadline or a retry time
                }
            }
        }
        var live = LiveState(interval: interval)
        // The waiting pull: its outcome is kept with it, not only sent as an event (events
        // can be dropped while a long sync runs; an outcome of a replaced pull is ignored).
        var poll: (cursor: String, task: Task<Void, Never>, outcome: Locked<Result<PullResponse, SyncError>?>)?
        var random = SystemRandomNumberGenerator()
        var iterator = events.makeAsyncIterator()
        defer {
            poll?.task.cancel()
            watcher.cancel()
            sink.finish()
        }
        while !shouldStop() && !Task.isCancelled {
            if live.syncDue(now: .now) {
                let before = (try? container.currentHistoryToken()) ?? .start
                prefetchedPage = live.takePrefetched()
                do {
                    let summary = try await sync()
                    live.synced(through: before, now: .now)
                    onSync(.success(summary))
                } catch is CancellationError where Task.isCancelled {
                    break  // the task was cancelled: not a failure to report
                } catch {
                    let failure = error as? SyncError ?? SyncError(.store, "\(error)")
                    let delay = live.failed(failure, backoff: backoff, now: .now, using: &random)
                    logger.warning("sync failed; retrying", metadata: ["error": "\(failure)", "in": "\(delay)"])
                    onSync(.failure(failure))
                }
                prefetchedPage = nil
            }
            // One pull waits at the server, from the store's cursor: a sync that moved the
            // cursor makes the waiting pull's answer stale, so it is replaced.
            let cursor = (try? read { db in try SyncState.read(db)?.cursor }) ?? nil
            if let current = poll, current.cursor != cursor ?? "" || !live.healthy {
                current.task.cancel()
                poll = nil
            }
            if poll == nil, live.mayWait(now: .now), let cursor, let seconds = waitSeconds(wait) {
                let limit = pageLimit
                let outcome = Locked<Result<PullResponse, SyncError>?>(nil)
                let task = Task.detached {
                    do {
                        let page = try await self.page(after: cursor, limit: limit, wait: seconds).page
                        outcome.withLock { $0 = .success(page) }
                    } catch {
                        if Task.isCancelled { return }
                        outcome.withLock { $0 = .failure(error as? SyncError ?? SyncError(.unreachable, "\(error)")) }
                    }
                    sink.yield(.waitEnded)
                }
                poll = (cursor, task, outcome)
            }
            guard let event = await iterator.next() else { break }
            if case .committed = event, live.healthy, hasLocalChanges(after: live.synced) { live.localChange() }
            // Whatever woke the loop, a waiting pull that answered is handled now.
            guard let current = poll, let outcome = current.outcome.withLock({ $0 }) else { continue }
            poll = nil
            switch outcome {
            case .success(let page):
                // A sync moved the cursor while the pull waited (this replica's own push woke
                // it, most often): its page is stale, and the next pull waits from the cursor.
                let cursor = (try? read { db in try SyncState.read(db)?.cursor }) ?? nil
                if cursor == current.cursor { live.pulled(from: current.cursor, page, now: .now) }
            case .failure(let error):
                let delay = live.waitFailed(error, backoff: backoff, now: .now, using: &random)
                logger.debug("the waiting pull failed; syncing", metadata: ["error": "\(error)", "waits again in": "\(delay)"])
            }
        }
    }

    /// Seconds a waiting pull asks for: `wait` cut to the server's maximum; `nil` when the
    /// server has no waiting pulls.
    private func waitSeconds(_ wait: Duration) -> Int? {
        guard let maximum = capabilities?.maxPullWaitSeconds, maximum > 0 else { return nil }
        return max(1, min(Int(wait.components.seconds), maximum))
    }
}

/// What wakes the live loop (the waiting pull's outcome itself is kept with the pull).
enum LiveEvent: Sendable {
    /// The waiting pull answered or failed.
    case waitEnded
    /// Something committed to the store (maybe a local change).
    case committed
    case tick
}

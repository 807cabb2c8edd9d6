import Foundation
import Tandem
import TandemWire

/// The decisions of ``SyncEngine/runLive(every:wait:checkInterval:backoff:shouldStop:onSync:)``
/// with no I/O (tested alone): when a sync is due, when a pull may wait at the server, and
/// how failures back off.
///
/// ```swift
/// var live = LiveState(interval: .seconds(30))
/// live.syncDue(now: .now)   // true: the first sync runs at once
/// ```
struct LiveState {
    typealias Instant = ContinuousClock.Instant

    /// The period of full syncs (the safety net).
    let interval: Duration
    /// A sync must run (at start, after news, a local change or a failure).
    private(set) var needsSync = true
    private var nextFullSync: Instant?
    /// After a failed sync: the next one waits until then.
    private var retryAt: Instant?
    private var failures = 0
    /// After failed waiting pulls: the next one waits until then.
    private var waitPausedUntil: Instant?
    private var waitFailures = 0
    /// The history token before the last successful sync: local commits after it are news.
    private(set) var synced: HistoryToken = .start
    /// The page a waiting pull brought, for the next sync to apply first.
    private var prefetched: (cursor: String, page: PullResponse)?

    init(interval: Duration) {
        self.interval = interval
    }

    /// Whether the last sync succeeded (pulls wait only then; a failing server is retried
    /// by full syncs with backoff).
    var healthy: Bool { failures == 0 }

    func syncDue(now: Instant) -> Bool {
        if let retryAt, now < retryAt { return false }
        return needsSync || nextFullSync.map { now >= $0 } ?? true
    }

    /// Whether a pull may wait at the server now.
    func mayWait(now: Instant) -> Bool {
        healthy && !needsSync && waitPausedUntil.map { now >= $0 } ?? true
    }

    mutating func takePrefetched() -> (cursor: String, page: PullResponse)? {
        defer { prefetched = nil }
        return prefetched
    }

    mutating func synced(through token: HistoryToken, now: Instant) {
        (failures, retryAt, needsSync, synced) = (0, nil, false, token)
        nextFullSync = now + interval
    }

    /// A sync failed: the next one after a backoff (or the server's `Retry-After`); returns the delay.
    mutating func failed(_ error: SyncError, backoff: Backoff, now: Instant, using random: inout some RandomNumberGenerator) -> Duration {
        failures += 1
        let delay = backoff.delay(afterFailures: failures, retryAfter: error.retryAfter.map { .milliseconds(Int64($0 * 1000)) }, using: &random)
        (retryAt, needsSync) = (now + delay, true)
        return delay
    }

    /// A waiting pull answered: news (entries, or a cursor that moved) make a sync due,
    /// applying the page first; an empty answer (the wait ended) lets the next pull wait.
    mutating func pulled(from cursor: String, _ page: PullResponse, now: Instant) {
        waitFailures = 0
        waitPausedUntil = nil
        guard !page.changes.isEmpty || page.nextCursor != cursor else { return }
        needsSync = true
        prefetched = (cursor, page)
    }

    /// A waiting pull failed: a full sync says why (and backs off if the server is away);
    /// the next waiting pull waits a backoff, so a refusal (429 `too_many_waiting`) is not
    /// asked again at once. Returns that pause.
    mutating func waitFailed(_ error: SyncError, backoff: Backoff, now: Instant, using random: inout some RandomNumberGenerator) -> Duration {
        waitFailures += 1
        let delay = backoff.delay(afterFailures: waitFailures, retryAfter: error.retryAfter.map { .milliseconds(Int64($0 * 1000)) }, using: &random)
        waitPausedUntil = now + delay
        needsSync = true
        return delay
    }

    /// A local change committed: pushed by a sync now.
    mutating func localChange() {
        needsSync = true
    }
}

import NIOConcurrencyHelpers
public import NIOCore

/// Where pulls that wait for new log entries (`pull?wait=SECONDS`) wait: each holds a
/// ``Ticket`` on its dataset, and a committed push wakes every ticket of its dataset. A
/// waiting pull costs a continuation and a timer, no thread. A storage owns one and wakes it
/// after each push it commits (on PostgreSQL, also when another node's push is announced).
///
/// A ticket is taken **before** the pull reads the log again, so a push that commits between
/// that read and the wait still wakes it: no lost wake-up.
///
/// ```swift
/// let ticket = try signals.ticket(dataset: 7, after: after, user: 1, limit: 64)
/// defer { ticket.cancel() }
/// if try await storage.logHead(dataset: 7) <= after {
///     let woken = await ticket.wait(for: .seconds(25))   // false: the time ran out
/// }
/// ```
public final class LogSignals: Sendable {
    fileprivate struct Waiter {
        var dataset: Int64
        var user: Int64
        /// The position the pull waits to pass.
        var after: Int64
        /// The connection the pull came on (its close ends the wait).
        var connection: ObjectIdentifier?
        var signalled = false
        /// The time ran out or the wait was cancelled before it began.
        var ended = false
        var continuation: CheckedContinuation<Bool, Never>?
    }

    fileprivate struct State {
        var waiters: [UInt64: Waiter] = [:]
        var byDataset: [Int64: Set<UInt64>] = [:]
        var byUser: [Int64: Int] = [:]
        var byConnection: [ObjectIdentifier: Set<UInt64>] = [:]
        /// The connections open now, once ``ConnectionGuard`` reports them (then a ticket of
        /// a connection not among them, closed before the ticket was taken, waits no time).
        var open: Set<ObjectIdentifier> = []
        var tracksConnections = false
        var next: UInt64 = 0
        /// Set while the server shuts down: every wait ends at once.
        var closing = false
    }

    private let state = NIOLockedValueBox(State())

    public init() {}

    /// A user holds `limit` tickets already (429 `too_many_waiting` at the edge).
    public struct Busy: Error {
        public let limit: Int
    }

    /// A place among the waiters of `dataset`'s log; give it back with ``Ticket/cancel()``.
    ///
    /// - Throws: ``Busy`` when `user` holds `limit` tickets already.
    ///   `connection`: the client's connection, whose close ends the wait
    ///   (``connectionClosed(_:)``).
    public func ticket(dataset: Int64, after: Int64, user: Int64, limit: Int, connection: ObjectIdentifier? = nil) throws(Busy) -> Ticket {
        let id: UInt64? = state.withLockedValue { state in
            guard state.byUser[user, default: 0] < limit else { return nil }
            state.next += 1
            let gone = connection.map { state.tracksConnections && !state.open.contains($0) } ?? false
            state.waiters[state.next] = Waiter(dataset: dataset, user: user, after: after, connection: connection, signalled: state.closing, ended: gone)
            state.byDataset[dataset, default: []].insert(state.next)
            if let connection { state.byConnection[connection, default: []].insert(state.next) }
            state.byUser[user, default: 0] += 1
            return state.next
        }
        guard let id else { throw Busy(limit: limit) }
        return Ticket(signals: self, id: id)
    }

    /// Wakes every pull waiting on `dataset` (a push to it committed).
    public func notify(dataset: Int64) {
        let woken = state.withLockedValue { state -> [CheckedContinuation<Bool, Never>] in
            guard let ids = state.byDataset[dataset] else { return [] }
            return ids.compactMap { state.signal($0) }
        }
        for continuation in woken { continuation.resume(returning: true) }
    }

    /// Wakes every pull `user` has waiting (a token of theirs revoked, or the user removed:
    /// each checks its access again).
    public func notify(user: Int64) {
        let woken = state.withLockedValue { state in
            state.waiters.filter { $0.value.user == user }.keys.compactMap { state.signal($0) }
        }
        for continuation in woken { continuation.resume(returning: true) }
    }

    /// Wakes every waiting pull (notifications may have been lost: each reads its log again).
    public func notifyAll() {
        let woken = state.withLockedValue { state in state.waiters.keys.compactMap { state.signal($0) } }
        for continuation in woken { continuation.resume(returning: true) }
    }

    /// A client's connection opened (``ConnectionGuard`` calls it).
    public func connectionOpened(_ connection: ObjectIdentifier) {
        state.withLockedValue { state in
            state.tracksConnections = true
            state.open.insert(connection)
        }
    }

    /// A client's connection closed: its pull stops waiting (``ConnectionGuard`` calls it).
    public func connectionClosed(_ connection: ObjectIdentifier) {
        let ids = state.withLockedValue { state in
            state.open.remove(connection)
            return state.byConnection[connection] ?? []
        }
        for id in ids { resume(id, woken: false) }
    }

    /// Ends every wait now and every later one at once (the server is shutting down: waiting
    /// pulls answer with what they have instead of holding the shutdown up).
    public func close() {
        state.withLockedValue { $0.closing = true }
        notifyAll()
    }

    /// Whether ``close()`` was called: waits end at once.
    public var isClosing: Bool {
        state.withLockedValue { $0.closing }
    }

    /// Pulls waiting now, over all users and datasets.
    public var waiting: Int {
        state.withLockedValue { $0.waiters.count }
    }

    /// The datasets pulls wait on now, each with the earliest position they wait to pass (a
    /// log head past it has news for one of them).
    public func waitingCursors() -> [Int64: Int64] {
        state.withLockedValue { state in
            state.byDataset.compactMapValues { ids in ids.compactMap { state.waiters[$0]?.after }.min() }
        }
    }

    /// Tickets `user` holds now.
    public func waiting(user: Int64) -> Int {
        state.withLockedValue { $0.byUser[user] ?? 0 }
    }

    /// One waiting pull's place (giving it back twice does nothing).
    public struct Ticket: Sendable {
        let signals: LogSignals
        let id: UInt64

        /// Waits until a push to the dataset commits (`true`, also when one committed since
        /// the ticket was taken), `timeout` passes, the ticket's connection closes or the
        /// task is cancelled (`false`). One wait per ticket.
        ///
        /// `timer`: an event loop that times the wait (a scheduled closure, cheaper than
        /// the sleeping task used without one). Not an `EmbeddedEventLoop`: its time does
        /// not pass by itself.
        public func wait(for timeout: Duration, timer: (any EventLoop)? = nil) async -> Bool {
            let (signals, id) = (self.signals, self.id)
            let scheduled = timer?.scheduleTask(in: TimeAmount(timeout)) { signals.resume(id, woken: false) }
            let sleeping: Task<Void, Never>? =
                scheduled != nil
                ? nil
                : Task {
                    try? await Task.sleep(for: timeout)
                    signals.resume(id, woken: false)
                }
            defer {
                scheduled?.cancel()
                sleeping?.cancel()
            }
            return await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let now: Bool? = signals.state.withLockedValue { state in
                        guard var waiter = state.waiters[id] else { return false }
                        if waiter.signalled { return true }
                        if waiter.ended { return false }
                        waiter.continuation = continuation
                        state.waiters[id] = waiter
                        return nil
                    }
                    if let now { continuation.resume(returning: now) }
                }
            } onCancel: {
                signals.resume(id, woken: false)
            }
        }

        /// Gives the place back.
        public func cancel() {
            signals.remove(id)
        }
    }

    private func resume(_ id: UInt64, woken: Bool) {
        let continuation = state.withLockedValue { state -> CheckedContinuation<Bool, Never>? in
            guard var waiter = state.waiters[id] else { return nil }
            let continuation = waiter.continuation
            waiter.continuation = nil
            waiter.ended = continuation == nil
            state.waiters[id] = waiter
            return continuation
        }
        continuation?.resume(returning: woken)
    }

    private func remove(_ id: UInt64) {
        let continuation = state.withLockedValue { state -> CheckedContinuation<Bool, Never>? in
            guard let waiter = state.waiters.removeValue(forKey: id) else { return nil }
            state.byDataset[waiter.dataset]?.remove(id)
            if state.byDataset[waiter.dataset]?.isEmpty == true { state.byDataset[waiter.dataset] = nil }
            state.byUser[waiter.user, default: 1] -= 1
            if state.byUser[waiter.user] == 0 { state.byUser[waiter.user] = nil }
            if let connection = waiter.connection {
                state.byConnection[connection]?.remove(id)
                if state.byConnection[connection]?.isEmpty == true { state.byConnection[connection] = nil }
            }
            return waiter.continuation
        }
        continuation?.resume(returning: false)
    }
}

extension LogSignals.State {
    /// Marks waiter `id` signalled; its continuation when it is waiting now.
    fileprivate mutating func signal(_ id: UInt64) -> CheckedContinuation<Bool, Never>? {
        guard var waiter = waiters[id] else { return nil }
        waiter.signalled = true
        let continuation = waiter.continuation
        waiter.continuation = nil
        waiters[id] = waiter
        return continuation
    }
}

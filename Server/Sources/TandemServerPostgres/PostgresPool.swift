import Foundation
public import Logging
import NIOConcurrencyHelpers
public import PostgresNIO
import TandemServer
import _ConnectionPoolModule

/// The storage's connection pool (postgres-nio's `PostgresClient`), watched: when
/// PostgreSQL cannot be reached, every operation fails at once (the server answers 503 with
/// `Retry-After`) while a probe tries a new pool every ``probeInterval``; when PostgreSQL
/// answers again the new pool replaces the old, so the node recovers by itself within about
/// a probe interval. (postgres-nio's own pool, left alone, queues requests for up to a
/// minute before failing them, then retries with a backoff that grows to a minute.)
///
/// An operation that waits longer than ``leaseDeadline`` for a connection is cancelled (the
/// pool is exhausted or PostgreSQL does not answer), and one that takes longer than
/// ``operationDeadline`` in all has its connection closed: either fails as unavailable
/// instead of holding the request.
///
/// ```swift
/// let pool = PostgresPool(configuration: url.configuration, location: url.description, logger: logger)
/// let rows = try await pool.withConnection { connection in try await connection.query("SELECT 1", logger: logger).collect() }
/// ```
final class PostgresPool: Sendable {
    private struct State {
        var client: PostgresClient
        var runner: Task<Void, Never>
        /// PostgreSQL could not be reached: operations fail at once while a probe runs.
        var down = false
        var probing = false
        var closed = false
    }

    let configuration: PostgresClient.Configuration
    let location: String
    let logger: Logger
    /// How long an operation may wait for a connection.
    let leaseDeadline: Duration
    /// How long an operation may take in all before its connection is closed.
    let operationDeadline: Duration
    let probeInterval: Duration
    /// Runs on a new pool that answers, before it serves (a failure counts as no answer):
    /// the storage checks there whether the database it finds is the one it left.
    let reconnected: @Sendable (PostgresClient) async throws -> Void
    private let state: NIOLockedValueBox<State>

    init(
        configuration: PostgresClient.Configuration, location: String, logger: Logger, leaseDeadline: Duration = .seconds(5),
        operationDeadline: Duration = .seconds(20), probeInterval: Duration = .milliseconds(500),
        reconnected: @escaping @Sendable (PostgresClient) async throws -> Void = { _ in }
    ) {
        self.reconnected = reconnected
        self.operationDeadline = operationDeadline
        self.configuration = configuration
        self.location = location
        self.logger = logger
        self.leaseDeadline = leaseDeadline
        self.probeInterval = probeInterval
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        state = NIOLockedValueBox(State(client: client, runner: Task { await client.run() }))
    }

    func close() {
        state.withLockedValue { state in
            state.closed = true
            state.runner.cancel()
        }
    }

    /// Runs `body` on a connection of the current pool; see ``run(_:)``.
    func withConnection<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        try await run { client, leased in
            try await client.withConnection { connection in
                try Task.checkCancellation()  // abandoned while it waited for the connection
                leased.withLockedValue { $0 = connection }
                return try await body(connection)
            }
        }
    }

    /// Runs `body` in a transaction (rolled back when it throws); see ``run(_:)``.
    /// `operationDeadline`: instead of the pool's (an operator's command that may run long).
    func withTransaction<T: Sendable>(
        operationDeadline: Duration? = nil, _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        try await run(operationDeadline: operationDeadline) { [logger] client, leased in
            try await client.withTransaction(logger: logger) { connection in
                try Task.checkCancellation()  // abandoned while it waited for the connection
                leased.withLockedValue { $0 = connection }
                return try await body(connection)
            }
        }
    }

    /// Runs `body` on the current pool, with ``StorageErrors`` mapping, the deadlines, and
    /// the outage watch: a failure to reach PostgreSQL marks it down and starts the probe.
    /// `body` puts the connection it leased in its box.
    ///
    /// - Throws: ``StorageError/unavailable(_:)`` at once while PostgreSQL is down, or when
    ///   the operation could not reach it; what `body` throws otherwise (mapped).
    private func run<T: Sendable>(
        operationDeadline: Duration? = nil, _ body: @escaping @Sendable (PostgresClient, NIOLockedValueBox<PostgresConnection?>) async throws -> T
    ) async throws -> T {
        let (client, down) = state.withLockedValue { ($0.client, $0.down) }
        guard !down else { throw StorageError.unavailable("PostgreSQL at \(location) cannot be reached; retrying every \(probeInterval)") }
        let leased = NIOLockedValueBox<PostgresConnection?>(nil)
        do {
            return try await StorageErrors.map(at: location) {
                try await Self.watching(leased, leaseDeadline: leaseDeadline, operationDeadline: operationDeadline ?? self.operationDeadline) {
                    try await body(client, leased)
                }
            }
        } catch let error as StorageErrors.Unreachable {
            suspect(client, because: error.reason, replace: !error.busy)
            throw StorageError.unavailable("PostgreSQL at \(location) cannot be reached: \(error.reason)")
        }
    }

    /// Runs `body` under two deadlines: when it holds no connection (`leased`) after
    /// `leaseDeadline` it is cancelled and abandoned (postgres-nio's pool does not always end
    /// a cancelled wait for a connection while PostgreSQL is away: seen holding requests past
    /// 30 s); when it has not finished after `operationDeadline` its connection is closed,
    /// which fails the query it waits on, and it is abandoned soon after. Either ends as
    /// ``StorageErrors/Unreachable``. An abandoned body that gets a connection later stops
    /// before its first query (it checks for cancellation), and a transaction cut off rolls
    /// back; a push that committed just before is replayed by the client's retry.
    private static func watching<T: Sendable>(
        _ leased: NIOLockedValueBox<PostgresConnection?>, leaseDeadline: Duration, operationDeadline: Duration,
        _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let work = Task { try await body() }
        let answer = NIOLockedValueBox<CheckedContinuation<T, any Error>?>(nil)
        @Sendable func finish(_ result: Result<T, any Error>) {
            answer.withLockedValue { continuation in
                continuation?.resume(with: result)
                continuation = nil
            }
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                answer.withLockedValue { $0 = continuation }
                if Task.isCancelled { finish(.failure(CancellationError())) }  // cancelled before it was stored
                let watchdog = Task {
                    try await Task.sleep(for: leaseDeadline)
                    guard let connection = leased.withLockedValue({ $0 }) else {
                        work.cancel()
                        finish(.failure(StorageErrors.Unreachable(reason: "no connection within \(leaseDeadline)", busy: true)))
                        return
                    }
                    try await Task.sleep(for: operationDeadline - leaseDeadline)
                    try? await connection.close()
                    try await Task.sleep(for: .seconds(2))
                    work.cancel()
                    finish(.failure(StorageErrors.Unreachable(reason: "no answer within \(operationDeadline)")))
                }
                Task {
                    let result = await work.result
                    watchdog.cancel()
                    finish(result)
                }
            }
        } onCancel: {
            // The request is gone (its client left, the server stops): answered at once; a
            // query already sent ends with its connection.
            work.cancel()
            finish(.failure(CancellationError()))
        }
    }

    /// Starts a probe of PostgreSQL (unless one runs) after `failed`, the pool an operation
    /// used, could not reach it. `replace`: the pool itself failed (a lost connection, its
    /// circuit breaker), so a new one takes its place once PostgreSQL answers; otherwise (no
    /// connection free in time) the pool may only be busy, and is replaced only if the probe
    /// finds PostgreSQL away first.
    private func suspect(_ failed: PostgresClient, because reason: String, replace: Bool) {
        let start = state.withLockedValue { state -> Bool in
            guard !state.probing, !state.closed, state.client === failed else { return false }
            state.probing = true
            return true
        }
        guard start else { return }
        Task { await probe(reason, replace: replace) }
    }

    /// Tries a new pool until PostgreSQL answers it: while it does not, operations fail at
    /// once (``State/down``); when it does, the new pool replaces the old one (unless the old
    /// one was only busy).
    private func probe(_ reason: String, replace: Bool) async {
        var attempt = 0
        while !state.withLockedValue({ $0.closed }) {
            if attempt > 0 { try? await Task.sleep(for: probeInterval) }
            attempt += 1
            let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
            let runner = Task { await client.run() }
            let answered =
                (try? await Self.watching(NIOLockedValueBox(nil), leaseDeadline: .seconds(2), operationDeadline: .seconds(4)) { [reconnected] in
                    guard try await client.query("SELECT 1").collect().count == 1 else { return false }
                    try await reconnected(client)
                    return true
                }) == true
            guard answered else {
                runner.cancel()
                let wentDown = state.withLockedValue { state -> Bool in
                    defer { state.down = true }
                    return !state.down
                }
                if wentDown {
                    logger.error("PostgreSQL cannot be reached; answering 503 and probing for it", metadata: ["database": "\(location)", "error": "\(reason)"])
                }
                continue
            }
            let old = state.withLockedValue { state -> Task<Void, Never>? in
                state.probing = false
                guard !state.closed, state.down || replace else { return nil }
                let old = state.runner
                state.client = client
                state.runner = runner
                state.down = false
                return old
            }
            guard let old else {
                runner.cancel()  // PostgreSQL answers: the pool was only busy, and stays
                return
            }
            old.cancel()
            logger.notice("PostgreSQL answers; serving with a new pool", metadata: ["database": "\(location)"])
            return
        }
        state.withLockedValue { $0.probing = false }
    }
}

/// How PostgreSQL's failures become ``StorageError``s.
enum StorageErrors {
    /// PostgreSQL could not be reached (no connection, the connection lost, the server
    /// shutting down): the pool watches for it to come back.
    struct Unreachable: Error {
        var reason: String
        /// No connection came in time: PostgreSQL may be away, or the pool only busy.
        var busy = false
    }

    /// Runs `body`, turning PostgreSQL's failures into ``StorageError``s: a unique key taken
    /// is a conflict, a lost or refused connection is ``Unreachable``, any other server error
    /// makes the storage unavailable, with PostgreSQL's own message in the log.
    static func map<T>(at location: String, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as PostgresTransactionError {
            // What the body threw (a refusal, a quota), else why BEGIN or COMMIT failed.
            let cause = error.closureError ?? error.beginError ?? error.commitError ?? error.rollbackError ?? error
            return try await map(at: location) { throw cause }
        } catch let error as PSQLError {
            let state = error.serverInfo?[.sqlState] ?? ""
            if state == "23505" { throw StorageError.conflict(error.serverInfo?[.message] ?? "a unique key is taken") }
            // Class 08: connection exceptions; 57P0x: the server shutting down or starting.
            if error.code != .server || state.hasPrefix("08") || state.hasPrefix("57P") {
                throw Unreachable(reason: error.serverInfo?[.message] ?? "\(error.code)")
            }
            throw StorageError.unavailable("PostgreSQL at \(location): \(state) \(error.serverInfo?[.message] ?? "")")
        } catch let error as PostgresDecodingError {
            throw StorageError.unavailable(
                "PostgreSQL at \(location) answered a column of an unexpected type (\(error.columnName)): the database is not this server's layout")
        } catch let error as ConnectionPoolError {
            throw Unreachable(reason: "\(error)")
        }
    }
}

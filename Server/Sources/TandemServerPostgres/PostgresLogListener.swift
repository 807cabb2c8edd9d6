import Crypto
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import PostgresNIO
import TandemServer

/// Wakes this node's waiting pulls when another node commits a push: every push announces
/// its dataset on the deployment's channel inside its transaction (`pg_notify`, delivered at
/// commit), and this listener, on a connection of its own outside the pool, hears it. The
/// channel is named after the database and schema (``channel(database:schema:)``): channels
/// are database-wide, and two deployments in two schemas of one database must not hear each
/// other.
///
/// Notifications can be lost (the listening connection drops, PostgreSQL restarts). Two
/// fallbacks bound the delay that costs: when the listener (re)connects it wakes every
/// waiting pull, and every ``recheckInterval`` it reads the log heads of the datasets pulls
/// wait on (one query, whatever their number) and wakes those with entries after a
/// waiter's cursor.
///
/// ```swift
/// let listener = PostgresLogListener(configuration: url.connectionConfiguration, node: node, signals: storage.logSignals, heads: …, logger: logger)
/// defer { listener.close() }
/// ```
final class PostgresLogListener: Sendable {
    /// The channel pushes announce on; the payload is `DATASET NODE`. Access changes announce
    /// on it too, so waiting pulls on every node look again at once: a member removed or a
    /// dataset deleted as `DATASET -`, a token revoked or a user removed as `uUSER -`.
    static func channel(database: String, schema: String) -> String {
        "tandem_log_" + String(Insecure.MD5.hash(data: Data("\(database).\(schema)".utf8)).map { String(format: "%02x", $0) }.joined().prefix(32))
    }

    private let tasks: [Task<Void, Never>]
    /// Whether the listening connection is up (tests wait for it).
    let listening = NIOLockedValueBox(false)

    /// - Parameter heads: the log heads of the given datasets (the fallback's query).
    init(
        configuration: PostgresConnection.Configuration, channel: String, node: String, signals: LogSignals, recheckInterval: Duration,
        heads: @escaping @Sendable ([Int64]) async throws -> [Int64: Int64], logger: Logger
    ) {
        let up = listening
        let listening = Task {
            var attempt = 0
            while !Task.isCancelled {
                attempt += 1
                do {
                    let connection = try await PostgresConnection.connect(configuration: configuration, id: attempt, logger: logger)
                    do {
                        // Cancelled (the storage closes): the connection closes, which ends the loop.
                        try await withTaskCancellationHandler {
                            try await connection.listen(on: channel) { notifications in
                                // Pushes committed while nobody listened: every waiter reads again.
                                signals.notifyAll()
                                up.withLockedValue { $0 = true }
                                defer { up.withLockedValue { $0 = false } }
                                for try await notification in notifications {
                                    let parts = notification.payload.split(separator: " ")
                                    guard parts.count == 2, parts[1] != node else { continue }
                                    // `uUSER`: a token of the user revoked or the user removed, on any node.
                                    if parts[0].first == "u", let user = Int64(parts[0].dropFirst()) {
                                        signals.notify(user: user)
                                    } else if let dataset = Int64(parts[0]) {
                                        signals.notify(dataset: dataset)
                                    }
                                }
                            }
                        } onCancel: {
                            _ = connection.close() as EventLoopFuture<Void>
                        }
                    } catch {
                        try? await connection.close()
                        throw error
                    }
                    try? await connection.close()
                } catch {
                    if !Task.isCancelled {
                        logger.debug("the PostgreSQL listener lost its connection; reconnecting", metadata: ["error": "\(String(reflecting: error))"])
                    }
                }
                signals.notifyAll()
                try? await Task.sleep(for: .seconds(1))
            }
        }
        let rechecking = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: recheckInterval)
                let waiting = signals.waitingCursors()
                guard !waiting.isEmpty, let found = try? await heads(Array(waiting.keys)) else { continue }
                for (dataset, head) in found where head > waiting[dataset] ?? .max {
                    signals.notify(dataset: dataset)
                }
            }
        }
        tasks = [listening, rechecking]
    }

    /// Stops listening.
    func close() {
        for task in tasks { task.cancel() }
    }

    deinit { close() }
}

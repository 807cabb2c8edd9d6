import Dispatch

/// The serial executor a ``SyncEngine`` runs on: a dispatch queue of its own. The engine's
/// work is blocking (SQLite reads and writes through GRDB, JSON of whole pages), and
/// blocking a thread of Swift's cooperative pool would stall every other task of the app on
/// a machine with few cores.
///
/// ```swift
/// actor Worker {
///     let executor = SyncExecutor(label: "worker")
///     nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
/// }
/// ```
///
/// (`DispatchSerialQueue` is not an executor on Linux yet, hence this class.)
final class SyncExecutor: SerialExecutor {
    private let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    func enqueue(_ job: UnownedJob) {
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }
}

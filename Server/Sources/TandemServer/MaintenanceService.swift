public import ServiceLifecycle
public import Logging

/// Runs the server's periodic upkeep until graceful shutdown: forgets push answers older
/// than ``ServerConfiguration/idempotencyRetentionMilliseconds``, purges what deleted
/// datasets left and compacts the logs (``ServerConfiguration/compaction``), in steps of
/// ``purgeStep`` rows, one short transaction each.
///
/// `buildApplication` runs it beside the HTTP server; its clock is the dependencies' `now`.
///
/// ```swift
/// let maintenance = MaintenanceService(dependencies: dependencies, logger: logger)
/// try await maintenance.runOnce()   // what each interval does
/// ```
public struct MaintenanceService: Service {
    let dependencies: ServerDependencies
    let logger: Logger

    public init(dependencies: ServerDependencies, logger: Logger) {
        self.dependencies = dependencies
        self.logger = logger
    }

    /// The rows one purge step of a deleted dataset deletes at most.
    public static let purgeStep = 2_000

    /// One round of upkeep; returns how many expired answers were dropped.
    ///
    /// - Throws: the storage's error.
    @discardableResult
    public func runOnce() async throws -> Int {
        try await dependencies.storage.purgeDeletedDatasets()
        let configuration = dependencies.configuration
        let report = try await dependencies.storage.compact(
            policy: configuration.compaction, now: dependencies.now(), maxClockSkew: configuration.maxClockSkewMilliseconds)
        for (dataset, failure) in report.failures.sorted(by: { $0.key < $1.key }) {
            logger.error("compacting a dataset's log failed; the others were compacted, and it is tried again next round", metadata: ["dataset": "\(dataset)", "error": "\(failure)"])
        }
        if report.entries + report.tombstones > 0 {
            logger.info(
                "compacted the log",
                metadata: ["datasets": "\(report.datasets)", "entries": "\(report.entries)", "tombstones": "\(report.tombstones)"])
        }
        let cutoff = dependencies.now() - dependencies.configuration.idempotencyRetentionMilliseconds
        return try await dependencies.storage.pruneIdempotencyKeys(before: cutoff)
    }

    public func run() async throws {
        let interval = dependencies.configuration.maintenanceInterval
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    let pruned = try await runOnce()
                    if pruned > 0 { logger.info("pruned expired idempotency keys", metadata: ["count": "\(pruned)"]) }
                } catch {
                    logger.error("maintenance failed; retrying at the next interval", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: interval)
            }
        }
    }
}

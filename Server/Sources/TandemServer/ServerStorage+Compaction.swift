/// What one compaction pass did (``ServerStorage/compact(policy:now:maxClockSkew:step:)``).
public struct CompactionReport: Sendable, Hashable {
    /// Log entries deleted.
    public var entries = 0
    /// Tombstones deleted.
    public var tombstones = 0
    /// Datasets whose log was compacted.
    public var datasets = 0
    /// What failed, by dataset id (the others were compacted all the same).
    public var failures: [Int64: String] = [:]

    public init() {}
}

extension ServerStorage {
    /// Compacts every dataset's log under `policy`, in steps of at most `step` rows, one
    /// short transaction each (pushes and pulls take turns between them):
    ///
    /// 1. notes each dataset's head (``addLogMark(dataset:position:at:)``) when its log grew;
    /// 2. deletes the entries the policy no longer keeps (the record states hold their
    ///    values already);
    /// 3. then deletes the tombstones of deletes stamped before the time the compacted log
    ///    ends at, less `maxClockSkew` (ms): a client whose cursor is older bootstraps again,
    ///    and its snapshot, lacking the record, removes it there too.
    ///
    /// ```swift
    /// let report = try await storage.compact(policy: CompactionPolicy(keepEntries: 1_000), now: now, maxClockSkew: 300_000)
    /// ```
    ///
    /// - Throws: the storage's error; what was done before it stays done.
    @discardableResult
    public func compact(policy: CompactionPolicy, now: Int64, maxClockSkew: Int64, step: Int = MaintenanceService.purgeStep) async throws -> CompactionReport {
        var report = CompactionReport()
        guard policy.isEnabled else { return report }
        for state in try await compactionStates() where state.head > 0 {
            do {
                try await compact(state, policy: policy, now: now, maxClockSkew: maxClockSkew, step: step, into: &report)
            } catch {
                report.failures[state.dataset] = "\(error)"
            }
        }
        return report
    }

    /// ``compact(policy:now:maxClockSkew:step:)`` of one dataset.
    private func compact(
        _ state: CompactionState, policy: CompactionPolicy, now: Int64, maxClockSkew: Int64, step: Int, into report: inout CompactionReport
    ) async throws {
        if let newest = try await logMark(dataset: state.dataset, notAfter: nil, notPast: nil), newest.position >= state.head {
            // Nothing logged since the last mark.
        } else {
            try await addLogMark(dataset: state.dataset, position: state.head, at: now)
        }
        var byTime: Int64?
        if let keep = policy.keepMilliseconds { byTime = try await logMark(dataset: state.dataset, notAfter: now - keep, notPast: nil)?.position }
        let horizon = policy.horizon(head: state.head, byTime: byTime)
        guard horizon > state.compactedThrough else { return }
        report.datasets += 1
        while true {
            let deleted = try await compactLog(dataset: state.dataset, through: horizon, limit: step)
            report.entries += deleted
            if deleted == 0 { break }
            await Task.yield()
        }
        // Deletes logged at or before the horizon were logged by the time of its mark.
        guard let mark = try await logMark(dataset: state.dataset, notAfter: nil, notPast: horizon) else { return }
        let before = mark.at - maxClockSkew
        guard before > state.tombstonesBefore else { return }
        var after = ""
        while true {
            let (last, pruned) = try await pruneTombstones(dataset: state.dataset, before: before, after: after, limit: step)
            report.tombstones += pruned
            guard let last else { break }
            after = last
            await Task.yield()
        }
    }
}

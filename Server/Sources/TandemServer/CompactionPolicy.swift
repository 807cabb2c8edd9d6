/// How much of each dataset's log a server keeps (`serve --log-retention`,
/// `--log-retention-entries`): older entries are folded into the record states, which the
/// server keeps anyway, and a client whose cursor is older gets 410 `cursor_expired` and
/// bootstraps again from a snapshot. With both limits, an entry is kept while either wants
/// it (the newer horizon of the two is not passed).
///
/// ```swift
/// let policy = CompactionPolicy(keepMilliseconds: 30 * 86_400_000)   // 30 days
/// policy.horizon(head: 900, byTime: 400)                            // 400
/// ```
public struct CompactionPolicy: Sendable, Hashable {
    /// Entries logged within this many milliseconds are kept (`nil`: no time limit).
    public var keepMilliseconds: Int64?
    /// The newest this many entries of each dataset are kept (`nil`: no count limit).
    public var keepEntries: Int64?

    public init(keepMilliseconds: Int64? = nil, keepEntries: Int64? = nil) {
        self.keepMilliseconds = keepMilliseconds
        self.keepEntries = keepEntries
    }

    /// Whether the policy compacts at all.
    public var isEnabled: Bool { keepMilliseconds != nil || keepEntries != nil }

    /// The position through which a log ending at `head` may be compacted: each limit's
    /// horizon (`byTime`: the last position logged before the time limit, `nil` when none
    /// is known to be that old), the older of them, and never the head itself (a log keeps
    /// its last entry: its position is the dataset's head).
    public func horizon(head: Int64, byTime: Int64?) -> Int64 {
        var horizon = head - 1
        if let keepEntries { horizon = min(horizon, head - keepEntries) }
        if keepMilliseconds != nil { horizon = min(horizon, byTime ?? 0) }
        return max(horizon, 0)
    }
}

/// Where compaction left one dataset: its log's head, the position through which its entries
/// were folded into the record states (a cursor before it is 410 `cursor_expired`), and the
/// time before which deletes' tombstones may be gone (an update of a record the server has
/// no state of is then taken for one of a deleted record: it loses to the delete).
///
/// ```swift
/// let state = try await storage.compaction(dataset: id)
/// if after < state.compactedThrough { /* 410 cursor_expired */ }
/// ```
public struct CompactionState: Sendable, Hashable {
    public var dataset: Int64
    /// The last position of the log (0: empty).
    public var head: Int64
    /// Entries at or before this position are gone (0: none).
    public var compactedThrough: Int64
    /// Tombstones of deletes stamped before this time (ms since 1970) may be gone (0: none).
    public var tombstonesBefore: Int64

    public init(dataset: Int64, head: Int64, compactedThrough: Int64, tombstonesBefore: Int64) {
        self.dataset = dataset
        self.head = head
        self.compactedThrough = compactedThrough
        self.tombstonesBefore = tombstonesBefore
    }
}

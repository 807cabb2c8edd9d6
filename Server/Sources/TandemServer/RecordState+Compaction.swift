public import TandemConflicts

extension RecordState {
    /// Whether this is a deleted record's tombstone whose delete is stamped before `time`
    /// (ms since 1970): compaction may forget it.
    ///
    /// ```swift
    /// if state.isTombstone(before: horizon) { /* delete the row */ }
    /// ```
    public func isTombstone(before time: Int64) -> Bool {
        guard isDeleted, let deleted else { return false }
        return deleted.physical < UInt64(max(time, 0))
    }
}

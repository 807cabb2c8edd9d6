/// The rules a conflict is decided by, as the conflict log names them. One list for the
/// server's merge and every replica's, so a log entry reads the same wherever it was written.
///
/// ```swift
/// let lost = conflicts.filter { $0.rule == ConflictRule.deleteWins.rawValue }
/// ```
public enum ConflictRule: String, Sendable, Hashable, Codable, CaseIterable {
    /// The newer HLC stamp wins, column by column (``ColumnMerge/incomingWins(_:over:)``).
    case lastWriterWins
    /// A delete wins against a concurrent update.
    case deleteWins
    /// A re-insert newer than a delete brings the record back; the delete lost.
    case insertAfterDelete
    /// Two records held one unique value: merged into the one with the smaller id.
    case uniqueMerge
    /// A record's parent was deleted elsewhere: its delete rule applied here.
    case parentDeleted
    /// A refused local change replaced by a later local edit of the same values.
    case superseded
    /// A quarantined change given up by hand.
    case dropped
    /// Conflict policies (see `ConflictPolicy`).
    case serverWins, clientWins, custom, updateWinsOverDelete
}

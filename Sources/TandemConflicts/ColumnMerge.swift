public import TandemSchema

/// How one column's value meets another: the decision the server's ``RecordMerge`` and
/// every replica's applier of pulled changes make alike, so they converge.
///
/// ```swift
/// if ColumnMerge.incomingWins(remoteStamp, over: localStamp) { /* write the remote value */ }
/// ```
public enum ColumnMerge {
    /// Whether a value stamped `incoming` replaces one stamped `current`: the newer stamp
    /// wins; equal stamps are the same write (nothing to replace).
    public static func incomingWins(_ incoming: HLCTimestamp, over current: HLCTimestamp) -> Bool {
        incoming > current
    }

    /// What a pulled value does against the stored one, and whether the loser is a conflict
    /// to log. `unpushed`: the stored value is a local edit not pushed yet (overwritten, it is
    /// a lost local value). `ownEdit`: this replica wrote the stored value, pushed or not
    /// (pulls come in log order, so it was written without seeing the pulled one: the pulled
    /// value lost a real conflict). Equal stamps are the same write: nothing happens.
    ///
    /// ```swift
    /// let decision = ColumnMerge.decide(incoming: remote, current: local, valuesDiffer: true, unpushed: true, ownEdit: true)
    /// decision.applies   // remote > local
    /// ```
    public static func decide(incoming: HLCTimestamp, current: HLCTimestamp, valuesDiffer: Bool, unpushed: Bool, ownEdit: Bool,
                              incomingWins: (HLCTimestamp, HLCTimestamp) -> Bool = incomingWins) -> Decision {
        if incoming == current { return Decision(applies: false, logged: nil) }
        if incomingWins(incoming, current) {
            return Decision(applies: true, logged: unpushed && valuesDiffer ? .incomingWon : nil)
        }
        return Decision(applies: false, logged: ownEdit && valuesDiffer ? .currentWon : nil)
    }

    /// A column's outcome.
    public struct Decision: Sendable, Hashable {
        /// Whether the incoming value is written.
        public var applies: Bool
        /// Which side lost a real conflict (`nil`: none, or the same value).
        public var logged: Loser?

        public init(applies: Bool, logged: Loser?) {
            self.applies = applies
            self.logged = logged
        }
    }

    /// Who won a logged conflict.
    public enum Loser: Sendable, Hashable {
        case incomingWon, currentWon
    }
}

public import TandemSchema
public import TandemWire

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

    /// Whether `incoming` replaces `current` when both carry the same stamp. One save stamps
    /// every value it writes alike, so a replica that wrote two records in one save and then
    /// sees them merged (a unique value they came to share, or its update of a merged-away
    /// record sent to the survivor) gives the survivor two values under one stamp: the one
    /// whose wire JSON sorts last wins, on the server and on every replica, whatever the
    /// order they arrive in. The same value is the same write.
    ///
    /// ```swift
    /// ColumnMerge.winsTie(.text("c"), over: .text("a"))   // true
    /// ```
    public static func winsTie(_ incoming: WireValue, over current: WireValue) -> Bool {
        guard incoming != current else { return false }
        func text(_ value: WireValue) -> String {
            var json = WireJSON()
            json.append(value)
            return json.text
        }
        return !text(incoming).utf8.lexicographicallyPrecedes(text(current).utf8)
    }

    /// What a pulled value does against the stored one, and whether the loser is a conflict
    /// to log. `unpushed`: the stored value is a local edit not pushed yet (overwritten, it is
    /// a lost local value). `ownEdit`: this replica wrote the stored value, pushed or not
    /// (pulls come in log order, so it was written without seeing the pulled one: the pulled
    /// value lost a real conflict); `false` when the pulled value is this replica's own too
    /// (an older edit of its own, replaced). `ownOverOther`: the pulled value is this
    /// replica's own and the stored one another's: the write never reached this row (made on a
    /// record merged into this one, or before a pulled delete and re-insert replaced the row),
    /// so it was made without seeing the stored value, which lost to it at the server without
    /// a word. Equal stamps are the same write: nothing happens.
    ///
    /// ```swift
    /// let decision = ColumnMerge.decide(incoming: remote, current: local, valuesDiffer: true, unpushed: true, ownEdit: true)
    /// decision.applies   // remote > local
    /// ```
    public static func decide(
        incoming: HLCTimestamp, current: HLCTimestamp, valuesDiffer: Bool, unpushed: Bool, ownEdit: Bool,
        ownOverOther: Bool = false, incomingWins: (HLCTimestamp, HLCTimestamp) -> Bool = incomingWins
    ) -> Decision {
        if incoming == current { return Decision(applies: false, logged: nil) }
        if incomingWins(incoming, current) {
            return Decision(applies: true, logged: (unpushed || ownOverOther) && valuesDiffer ? .incomingWon : nil)
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

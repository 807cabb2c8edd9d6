import Testing
import TandemConflicts
import TandemSchema

/// The per-column decision a replica makes for a pulled value against its own.
@Suite("ColumnMerge")
struct ColumnMergeTests {
    static let older = HLCTimestamp(physical: 10, counter: 0, node: 1)
    static let newer = HLCTimestamp(physical: 11, counter: 0, node: 2)

    @Test func aNewerPulledValueIsWrittenAndAnUnpushedLocalOneIsLoggedAsLost() {
        let decision = ColumnMerge.decide(incoming: Self.newer, current: Self.older, valuesDiffer: true, unpushed: true, ownEdit: true)
        #expect(decision == .init(applies: true, logged: .incomingWon))
    }

    @Test func aNewerPulledValueOverAPushedOneIsNoConflict() {
        #expect(
            ColumnMerge.decide(incoming: Self.newer, current: Self.older, valuesDiffer: true, unpushed: false, ownEdit: true)
                == .init(applies: true, logged: nil))
    }

    /// This replica's own value pulled back over another's older one the row holds: the write
    /// never reached this row, so the value it replaced lost a real conflict.
    @Test func anOwnValuePulledBackOverAnothersIsLoggedAsTheOthersLoss() {
        #expect(
            ColumnMerge.decide(incoming: Self.newer, current: Self.older, valuesDiffer: true, unpushed: false, ownEdit: false, ownOverOther: true)
                == .init(applies: true, logged: .incomingWon))
        #expect(
            ColumnMerge.decide(incoming: Self.newer, current: Self.older, valuesDiffer: false, unpushed: false, ownEdit: false, ownOverOther: true)
                == .init(applies: true, logged: nil))
    }

    @Test func anOlderPulledValueLosesToThisReplicasOwnEditAndIsLogged() {
        #expect(
            ColumnMerge.decide(incoming: Self.older, current: Self.newer, valuesDiffer: true, unpushed: false, ownEdit: true)
                == .init(applies: false, logged: .currentWon))
        // Against a value another replica wrote (pulled before), an older one is no news.
        #expect(
            ColumnMerge.decide(incoming: Self.older, current: Self.newer, valuesDiffer: true, unpushed: false, ownEdit: false)
                == .init(applies: false, logged: nil))
    }

    @Test func theSameStampIsTheSameWriteAndTheSameValueIsNoConflict() {
        #expect(
            ColumnMerge.decide(incoming: Self.older, current: Self.older, valuesDiffer: true, unpushed: true, ownEdit: true)
                == .init(applies: false, logged: nil))
        #expect(
            ColumnMerge.decide(incoming: Self.newer, current: Self.older, valuesDiffer: false, unpushed: true, ownEdit: true)
                == .init(applies: true, logged: nil))
    }

    @Test func everyRuleTheLogNamesIsListedOnce() {
        #expect(Set(ConflictRule.allCases.map(\.rawValue)).count == ConflictRule.allCases.count)
        #expect(ConflictRule(rawValue: "uniqueMerge") == .uniqueMerge)
    }
}

import PropertyBased
import Testing
import TandemConflicts
import TandemSchema
import TandemWire

/// The merge laws every replica's convergence rests on, checked on random change sets: the
/// state a record ends in depends on the set of changes it received, not on their order,
/// and not on how often each arrived.
@Suite("Merge laws (property tests)")
struct RecordMergeLawTests {
    typealias Rule = (HLCTimestamp, HLCTimestamp) -> Bool

    /// A change and its parsed stamps, decoded from one generated number (so shrinking works
    /// on plain integers): record 0 or 1; insert, update (twice as likely) or delete; columns
    /// a, b or both; a value 0...4; a physical time 1...30. Every change gets a stamp of its
    /// own (`counter` is its index): equal stamps mean the same write.
    static func change(_ code: Int, index: Int, sharedStamps: Bool = false) -> (WireChange, [String: HLCTimestamp]) {
        let record = "tandem://d/T/0000000\(code % 2)-0000-0000-0000-000000000000"
        let kinds: [WireChange.Kind] = [.insert, .update, .update, .delete]
        let kind = kinds[(code / 2) % 4]
        let columns = [["a"], ["b"], ["a", "b"]][(code / 8) % 3]
        let stamp = HLCTimestamp(physical: UInt64((code / 120) % 30 + 1), counter: sharedStamps ? 0 : UInt16(index), node: 1)
        if kind == .delete {
            return (WireChange(record: record, entity: "T", kind: .delete, stamps: ["*": stamp.description]), ["*": stamp])
        }
        let value = WireValue.integer(Int64((code / 24) % 5))
        return (
            WireChange(
                record: record, entity: "T", kind: kind, values: Dictionary(uniqueKeysWithValues: columns.map { ($0, value) }),
                stamps: Dictionary(uniqueKeysWithValues: columns.map { ($0, stamp.description) })),
            Dictionary(uniqueKeysWithValues: columns.map { ($0, stamp) })
        )
    }

    /// Every record's state after `changes` in this order.
    static func states(_ changes: [(WireChange, [String: HLCTimestamp])], rule: Rule = ColumnMerge.incomingWins) -> [String: RecordState] {
        var states: [String: RecordState] = [:]
        for (change, stamps) in changes {
            var state = states[change.record]
            _ = RecordMerge.apply(change, stamps: stamps, to: &state, incomingWins: rule)
            states[change.record] = state
        }
        return states
    }

    /// `codes` in a random order (from `seed`), deterministic.
    static func shuffled<T>(_ items: [T], seed: Int) -> [T] {
        var state = UInt64(truncatingIfNeeded: seed) | 1
        var result = items
        for i in stride(from: result.count - 1, to: 0, by: -1) {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            result.swapAt(i, Int((state >> 33) % UInt64(i + 1)))
        }
        return result
    }

    static func orderIndependent(_ codes: [Int], seed: Int, sharedStamps: Bool = false, rule: Rule = ColumnMerge.incomingWins) -> Bool {
        let changes = codes.enumerated().map { change($1, index: $0, sharedStamps: sharedStamps) }
        return states(changes, rule: rule) == states(shuffled(changes, seed: seed), rule: rule)
    }

    static let codes = Gen.int(in: 0...1_000_000).array(of: 1...14)

    @Test func theFinalStateDoesNotDependOnTheOrderChangesArriveIn() async {
        await propertyCheck(count: 400, input: Self.codes, Gen.int(in: 0...1_000_000)) { codes, seed in
            #expect(Self.orderIndependent(codes, seed: seed))
        }
    }

    /// Two writes under one stamp with different values (a stamp reused, or the server's
    /// stamp just after another): the tie is broken by value (`ColumnMerge.winsTie`), the
    /// same way in every order. Stamps here differ only by their physical time (1...30).
    @Test func twoValuesUnderOneStampEndTheSameInEveryOrder() async {
        await propertyCheck(count: 400, input: Self.codes, Gen.int(in: 0...1_000_000)) { codes, seed in
            #expect(Self.orderIndependent(codes, seed: seed, sharedStamps: true))
        }
    }

    @Test func aChangeReceivedTwiceChangesNothingMore() async {
        await propertyCheck(count: 400, input: Self.codes, Gen.int(in: 0...1_000_000)) { codes, seed in
            let changes = codes.enumerated().map { Self.change($1, index: $0) }
            // Every change again, in another order, after all of them (a replayed push, a
            // page pulled twice).
            #expect(Self.states(changes) == Self.states(changes + Self.shuffled(changes, seed: seed)))
        }
    }

    @Test func mergingTwoHalvesInEitherOrderIsTheSame() async {
        await propertyCheck(count: 400, input: Self.codes, Gen.int(in: 0...14)) { codes, cut in
            let changes = codes.enumerated().map { Self.change($1, index: $0) }
            let split = min(cut, changes.count)
            let (first, second) = (Array(changes[..<split]), Array(changes[split...]))
            #expect(Self.states(first + second) == Self.states(second + first))
        }
    }

    /// The harness catches a merge that breaks the laws: the last change applied always wins.
    @Test func aPlantedLastAppliedWinsMergeBreaksTheLaws() {
        var found = false
        var state: UInt64 = 42
        for _ in 0..<300 where !found {
            let codes = (0..<8).map { _ in
                state = state &* 6364136223846793005 &+ 1442695040888963407
                return Int(state >> 40)
            }
            found = !Self.orderIndependent(codes, seed: Int(state >> 20), rule: { _, _ in true })
        }
        #expect(found, "a last-applied-wins merge went unnoticed")
    }
}

import Foundation
import Testing
@testable import TandemServer
import TandemSchema
import TandemWire

/// The conflict model with no I/O.
@Suite("Record merge (per-field HLC, delete wins)")
struct RecordMergeTests {
    static func stamp(_ physical: UInt64, node: UInt64 = 1) -> HLCTimestamp { HLCTimestamp(physical: physical, counter: 0, node: node) }

    static func change(_ kind: WireChange.Kind, _ values: [String: WireValue], at physical: UInt64, node: UInt64 = 1) -> (WireChange, [String: HLCTimestamp]) {
        let stamp = stamp(physical, node: node)
        let keys = kind == .delete ? [WireChange.deleteStampKey] : Array(values.keys)
        let stamps = Dictionary(uniqueKeysWithValues: keys.map { ($0, stamp) })
        return (
            WireChange(
                record: "tandem://d/Todo/00000000-0000-0000-0000-000000000001", entity: "Todo", kind: kind,
                values: values, stamps: stamps.mapValues(\.description)), stamps
        )
    }

    @Test func aNewerValueWinsAndAnOlderOneLosesToIt() {
        var state: RecordState?
        let (insert, s1) = Self.change(.insert, ["title": .text("a"), "rank": .integer(1)], at: 100)
        #expect(RecordMerge.apply(insert, stamps: s1, to: &state).applied.keys.sorted() == ["rank", "title"])
        let (newer, s2) = Self.change(.update, ["title": .text("b")], at: 200)
        #expect(RecordMerge.apply(newer, stamps: s2, to: &state).applied.keys.sorted() == ["title"])
        let (older, s3) = Self.change(.update, ["title": .text("stale"), "rank": .integer(7)], at: 150)
        let merged = RecordMerge.apply(older, stamps: s3, to: &state)
        #expect(merged.applied.keys.sorted() == ["rank"], "rank's stamp 100 < 150: applied")
        #expect(
            merged.lost == [
                LostValue(
                    attribute: "title", value: .text("stale"), stamp: Self.stamp(150).description,
                    winningValue: .text("b"), winningStamp: Self.stamp(200).description)
            ])
        #expect(state?.fields["title"]?.value == .text("b"))
        #expect(state?.fields["rank"]?.value == .integer(7))
    }

    /// An insert sent again with a later edit's value (the server refused it first) is as old
    /// as its creation: a delete between the two wins over it, and the edit's value, newer,
    /// is kept without bringing the record back in part.
    @Test func anInsertIsAsOldAsItsCreationNotItsNewestValue() {
        var state: RecordState?
        _ = RecordMerge.apply(Self.change(.insert, ["title": .text("theirs")], at: 150).0, stamps: Self.change(.insert, ["title": .text("theirs")], at: 150).1, to: &state)
        let (delete, deleteStamps) = Self.change(.delete, [:], at: 200)
        _ = RecordMerge.apply(delete, stamps: deleteStamps, to: &state)
        var insert = WireChange(
            record: delete.record, entity: "Todo", kind: .insert, values: ["title": .text("mine"), "rank": .integer(1000)],
            stamps: ["*": Self.stamp(100).description, "rank": Self.stamp(300).description])
        let stamps = ["title": Self.stamp(100), "rank": Self.stamp(300)]
        var dated = state
        let merged = RecordMerge.apply(insert, stamps: stamps, created: Self.stamp(100), to: &state)
        #expect(state?.isDeleted == true)
        #expect(merged.applied.isEmpty)
        #expect(Set(merged.lost.map(\.attribute)) == ["title", "rank"] && merged.lost.allSatisfy(\.toDelete))
        // Dated by its newest value, it came back with the rank alone (the bug).
        insert.stamps = ["title": Self.stamp(100).description, "rank": Self.stamp(300).description]
        let byNewest = RecordMerge.apply(insert, stamps: stamps, to: &dated)
        #expect(dated?.isDeleted == false && byNewest.applied.keys.sorted() == ["rank"])
    }

    @Test func twoValuesUnderOneStampEndTheSameWhateverTheirOrder() {
        var states: [RecordState?] = []
        for order in [["a", "c"], ["c", "a"]] {
            var state: RecordState?
            _ = RecordMerge.apply(Self.change(.insert, ["name": .text("x")], at: 100).0, stamps: Self.change(.insert, ["name": .text("x")], at: 100).1, to: &state)
            var lost: [LostValue] = []
            for name in order {
                let (update, stamps) = Self.change(.update, ["name": .text(name)], at: 200)
                lost += RecordMerge.apply(update, stamps: stamps, to: &state).lost
            }
            states.append(state)
            #expect(lost.map(\.value) == (order == ["c", "a"] ? [.text("a")] : []), "the value that loses the tie, when it comes second, is reported")
        }
        #expect(states[0] == states[1])
        #expect(states[0]?.fields["name"]?.value == .text("c"), "the wire JSON that sorts last wins")
    }

    @Test func aValueLostToADeleteSaysSoAndTheSameValueUnderAnOlderStampLosesNothing() throws {
        var state: RecordState?
        let (insert, s1) = Self.change(.insert, ["title": .text("a"), "note": .null], at: 100)
        _ = RecordMerge.apply(insert, stamps: s1, to: &state)
        // A newer null wins over an older value: a value's loss, not a delete's.
        let (cleared, s2) = Self.change(.update, ["title": .null], at: 300)
        _ = RecordMerge.apply(cleared, stamps: s2, to: &state)
        let (older, s3) = Self.change(.update, ["title": .text("b"), "note": .null], at: 200)
        let lost = RecordMerge.apply(older, stamps: s3, to: &state).lost
        #expect(lost.map(\.attribute) == ["title"], "note: null under an older stamp loses nothing")
        #expect(lost.first?.toDelete == false && lost.first?.winningValue == .null)
        let (delete, s4) = Self.change(.delete, [:], at: 400)
        _ = RecordMerge.apply(delete, stamps: s4, to: &state)
        let (late, s5) = Self.change(.update, ["title": .text("c")], at: 350)
        #expect(RecordMerge.apply(late, stamps: s5, to: &state).lost.map(\.toDelete) == [true])
        // On the wire only when true, and read back.
        let json = WireJSON.data { $0.append(LostValue(attribute: "t", value: .null, stamp: "s", winningValue: .null, winningStamp: "w", toDelete: true)) }
        #expect(String(decoding: json, as: UTF8.self).contains(#""toDelete":true"#))
        #expect(!String(decoding: WireJSON.data { $0.append(lost[0]) }, as: UTF8.self).contains("toDelete"))
        let response = PushResponse(
            outcomes: [
                ChangeOutcome(index: nil, position: 1, applied: [], lost: [lost[0], LostValue(attribute: "t", value: .null, stamp: "s", winningValue: .null, winningStamp: "w", toDelete: true)])
            ],
            changeCount: nil, serverTime: 0)
        #expect(try WireJSONReader.pushResponse(WireJSON.data { $0.append(response) }).outcomes.first?.lost.map(\.toDelete) == [false, true])
    }

    /// The push's fast path for a record the server has never seen writes this state without
    /// the merge: it must be exactly what the merge makes of the insert.
    @Test func aNewRecordsStateIsWhatTheMergeMakesOfItsInsert() throws {
        let values: [String: WireValue] = [
            "title": .text("a"), "rank": .integer(3), "done": .bool(true), "note": .null,
            "blob": .bytes(Data([1, 2])), "score": .real(2.5),
        ]
        var stamps: [String: HLCTimestamp] = [:]
        for (offset, name) in values.keys.sorted().enumerated() {
            stamps[name] = HLCTimestamp(physical: 100 + UInt64(offset * 7 % 5), counter: UInt16(offset), node: UInt64(9 - offset))
        }
        let insert = WireChange(
            record: "tandem://d/Todo/00000000-0000-0000-0000-000000000001", entity: "Todo", kind: .insert,
            values: values, stamps: stamps.mapValues(\.description))
        var merged: RecordState?
        let result = RecordMerge.apply(insert, stamps: stamps, to: &merged)
        let created = try #require(stamps.values.max())
        let fast = RecordState(newRecord: "Todo", values: values, stamps: stamps, created: created)
        #expect(fast == merged)
        #expect(result.applied.keys.sorted() == values.keys.sorted() && result.lost.isEmpty && result.restore == nil)
        let bytes = RecordState.binaryBytes(newRecord: "Todo", values: values, stamps: stamps, created: created)
        #expect(try bytes.withUnsafeBytes { try RecordState(stored: $0) } == merged)
        #expect(fast.binaryBytes().count == bytes.count)
    }

    @Test func theSameStampIsTheSameEditAndChangesNothing() {
        var state: RecordState?
        let (insert, stamps) = Self.change(.insert, ["title": .text("a")], at: 100)
        _ = RecordMerge.apply(insert, stamps: stamps, to: &state)
        let again = RecordMerge.apply(insert, stamps: stamps, to: &state)
        #expect(again.applied.isEmpty && again.lost.isEmpty)
    }

    @Test func equalPhysicalTimesAreOrderedByNodeOnEveryReplica() {
        var state: RecordState?
        let (a, sa) = Self.change(.update, ["title": .text("node 1")], at: 100, node: 1)
        let (b, sb) = Self.change(.update, ["title": .text("node 2")], at: 100, node: 2)
        _ = RecordMerge.apply(b, stamps: sb, to: &state)
        _ = RecordMerge.apply(a, stamps: sa, to: &state)
        var other: RecordState?
        _ = RecordMerge.apply(a, stamps: sa, to: &other)
        _ = RecordMerge.apply(b, stamps: sb, to: &other)
        #expect(state == other)
        #expect(state?.fields["title"]?.value == .text("node 2"))
    }

    @Test func aDeleteWinsOverUpdatesOlderOrNewer() {
        var state: RecordState?
        let (insert, s1) = Self.change(.insert, ["title": .text("a")], at: 100)
        _ = RecordMerge.apply(insert, stamps: s1, to: &state)
        let (delete, s2) = Self.change(.delete, [:], at: 200)
        #expect(RecordMerge.apply(delete, stamps: s2, to: &state).applied.keys.sorted() == ["*"])
        for physical: UInt64 in [150, 300] {
            let (update, s3) = Self.change(.update, ["title": .text("late")], at: physical)
            let merged = RecordMerge.apply(update, stamps: s3, to: &state)
            #expect(merged.applied.isEmpty)
            #expect(merged.lost.map(\.winningStamp) == [Self.stamp(200).description])
        }
        #expect(state?.deleted == Self.stamp(200))
    }

    @Test func anInsertNewerThanTheDeleteBringsTheRecordBack() {
        var state: RecordState?
        let (delete, s1) = Self.change(.delete, [:], at: 200)
        _ = RecordMerge.apply(delete, stamps: s1, to: &state)
        let (older, s2) = Self.change(.insert, ["title": .text("old")], at: 100)
        #expect(RecordMerge.apply(older, stamps: s2, to: &state).applied.isEmpty)
        let (reinsert, s3) = Self.change(.insert, ["title": .text("again")], at: 300)
        #expect(RecordMerge.apply(reinsert, stamps: s3, to: &state).applied.keys.sorted() == ["title"])
        #expect(state?.isDeleted == false)
    }

    /// Found by the sync convergence simulation: a value written to the deleted record after
    /// the delete survives into the re-inserted record, so the re-insert must hand it on.
    @Test func aReinsertAppliesEveryValueNewerThanTheDeleteNotOnlyItsOwn() {
        var state: RecordState?
        _ = RecordMerge.apply(
            Self.change(.insert, ["title": .text("first"), "rank": .integer(1)], at: 100).0,
            stamps: Self.change(.insert, ["title": .text("first"), "rank": .integer(1)], at: 100).1, to: &state)
        let (delete, s1) = Self.change(.delete, [:], at: 200)
        _ = RecordMerge.apply(delete, stamps: s1, to: &state)
        let (late, s2) = Self.change(.update, ["rank": .integer(38)], at: 400, node: 2)
        let lateResult = RecordMerge.apply(late, stamps: s2, to: &state)
        #expect(lateResult.applied.isEmpty && lateResult.lost.map(\.attribute) == ["rank"], "the record is deleted: the update loses")
        let (reinsert, s3) = Self.change(.insert, ["title": .text("again"), "rank": .integer(31)], at: 300, node: 3)
        let result = RecordMerge.apply(reinsert, stamps: s3, to: &state)
        #expect(result.applied.mapValues(\.value) == ["title": .text("again"), "rank": .integer(38)])
        #expect(result.lost.map(\.attribute) == ["rank"], "its own older rank lost to the surviving newer one")
    }

    /// Found by the simulation with conflict policies: a delete older than the recorded one,
    /// sent by a replica that deleted its copy, while the record lives again.
    @Test func anOlderDeleteOfARecordThatLivesAgainAsksForItsRestore() {
        var state: RecordState?
        let (insert, s0) = Self.change(.insert, ["title": .text("a")], at: 100)
        _ = RecordMerge.apply(insert, stamps: s0, to: &state)
        let (delete, s1) = Self.change(.delete, [:], at: 300, node: 2)
        _ = RecordMerge.apply(delete, stamps: s1, to: &state)
        let (reinsert, s2) = Self.change(.insert, ["title": .text("b")], at: 400, node: 2)
        _ = RecordMerge.apply(reinsert, stamps: s2, to: &state)
        let (older, s3) = Self.change(.delete, [:], at: 200, node: 3)
        let result = RecordMerge.apply(older, stamps: s3, to: &state)
        #expect(result.applied.isEmpty && result.lost.map(\.attribute) == ["*"])
        #expect(result.restore?.mapValues(\.value) == ["title": .text("b")])
        #expect(state?.isDeleted == false)
    }

    @Test func anOlderDeleteThanTheRecordedOneChangesNothing() {
        var state: RecordState?
        let (delete, s1) = Self.change(.delete, [:], at: 200)
        _ = RecordMerge.apply(delete, stamps: s1, to: &state)
        let (older, s2) = Self.change(.delete, [:], at: 150)
        #expect(RecordMerge.apply(older, stamps: s2, to: &state).applied.isEmpty)
        #expect(state?.deleted == Self.stamp(200))
    }

    /// Every order of the same changes gives the same state: the server converges.
    @Test func anyArrivalOrderGivesTheSameState() {
        let changes = [
            Self.change(.insert, ["title": .text("a"), "rank": .integer(1)], at: 100),
            Self.change(.update, ["title": .text("b")], at: 150),
            Self.change(.delete, [:], at: 200),
            Self.change(.update, ["rank": .integer(5)], at: 250),
            Self.change(.insert, ["title": .text("again")], at: 300),
            Self.change(.delete, [:], at: 120),
        ]
        var reference: RecordState?
        for (change, stamps) in changes { _ = RecordMerge.apply(change, stamps: stamps, to: &reference) }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<50 {
            var state: RecordState?
            for (change, stamps) in changes.shuffled(using: &generator) { _ = RecordMerge.apply(change, stamps: stamps, to: &state) }
            #expect(state == reference)
        }
        #expect(reference?.isDeleted == false)
        #expect(reference?.fields["title"]?.value == .text("again"))
        #expect(reference?.fields["rank"]?.value == .integer(5), "written after the delete: kept on re-insert")
    }

    @Test func aDeleteOlderThanTheNewestInsertLosesAndIsRecorded() {
        var state: RecordState?
        let (insert, s1) = Self.change(.insert, ["title": .text("a")], at: 300)
        _ = RecordMerge.apply(insert, stamps: s1, to: &state)
        let (delete, s2) = Self.change(.delete, [:], at: 200)
        let merged = RecordMerge.apply(delete, stamps: s2, to: &state)
        #expect(merged.applied.isEmpty)
        #expect(merged.lost.map(\.attribute) == ["*"])
        #expect(state?.isDeleted == false)
    }
}

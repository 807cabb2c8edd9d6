import Testing
import TandemWire

/// Compact stamps: one default under "*", and the values stamped otherwise.
@Suite("Compact stamps")
struct WireChangeStampsTests {
    static let (s1, s2, s3) = ("0190a1b2c3d4-0000-0000000000000001", "0190a1b2c3d4-0000-0000000000000002", "0190a1b2c3d5-0000-0000000000000001")
    static let values: [String: WireValue] = ["a": .integer(1), "b": .integer(2), "c": .integer(3)]

    @Test func compactingKeepsTheNewestAsDefaultAndOnlyTheValuesStampedOtherwise() {
        let change = WireChange(record: "r", entity: "E", kind: .update, values: Self.values, stamps: ["a": Self.s1, "b": Self.s3, "c": Self.s3])
        let compact = change.compacted()
        #expect(compact.stamps == ["*": Self.s3, "a": Self.s1])
        #expect(Self.values.keys.map { compact.stamp(of: $0) } == Self.values.keys.map { change.stamp(of: $0) })
        #expect(compact.compacted() == compact)
        #expect(compact.withStampPerValue() == change, "a stamp per value, none under \"*\"")
    }

    @Test func aDeleteIsLeftAsItIs() {
        let delete = WireChange(record: "r", entity: "E", kind: .delete, stamps: ["*": Self.s1])
        #expect(delete.compacted() == delete && delete.withStampPerValue() == delete)
        #expect(delete.stamp(of: "a") == nil, "a delete's \"*\" stamps the delete, not values")
    }

    @Test func settingTheCreationStampKeepsWhatEachValueHad() {
        var change = WireChange(record: "r", entity: "E", kind: .insert, values: Self.values, stamps: ["*": Self.s2, "a": Self.s3])
        change.setCreationStamp(Self.s3)
        #expect(change.stamps == ["*": Self.s3, "b": Self.s2, "c": Self.s2])
        var full = WireChange(record: "r", entity: "E", kind: .insert, values: Self.values, stamps: ["a": Self.s1, "b": Self.s2, "c": Self.s2])
        full.setCreationStamp(Self.s2)
        #expect(full.stamps == ["*": Self.s2, "a": Self.s1])
    }
}

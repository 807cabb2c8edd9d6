import Foundation
import Testing
import TandemSchema
@testable import TandemServer
import TandemWire

/// The fast JSON writer reads back, through `JSONDecoder`, as exactly what it wrote.
@Suite("Wire JSON writer")
struct WireJSONTests {
    static let tricky = ["", "plain", "quote \" backslash \\ slash /", "tab\tnew\nline\rcr", "\u{01}\u{1F}\u{7F}", "é 😀 ∑", "{\"not\":\"json\"}"]

    static let change = WireChange(
        record: "tandem://d/Todo/00000000-0000-0000-0000-000000000001", entity: "Todo \"x\"", kind: .update,
        values: Dictionary(uniqueKeysWithValues: tricky.enumerated().map { ("k\($0.offset) \($0.element)", WireValue.text($0.element)) })
            .merging([
                "null": .null, "t": .bool(true), "f": .bool(false), "i": .integer(.min), "j": .integer(.max),
                "r": .real(-1.5e-300), "s": .real(6.02e23), "b": .bytes(Data([0, 1, 254, 255])),
            ]) { a, _ in a },
        stamps: ["k0": "0190a1b2c3d4-0001-00000000000000aa"])

    @Test func changesRoundTrip() throws {
        #expect(try JSONDecoder().decode(WireChange.self, from: WireJSON.data { $0.append(Self.change) }) == Self.change)
    }

    @Test func pushAndPullAnswersRoundTrip() throws {
        let lost = LostValue(attribute: "title", value: .text("a\"b"), stamp: "s1", winningValue: .real(2.5), winningStamp: "s2")
        let push = PushResponse(
            outcomes: [ChangeOutcome(position: 7, applied: ["a", "b"], lost: [lost]), ChangeOutcome(position: nil, applied: [], lost: [])],
            serverTime: 1_800_000_000_000)
        #expect(try JSONDecoder().decode(PushResponse.self, from: WireJSON.data { $0.append(push) }) == push)
        var echoed = push
        echoed.echo = PushEcho(from: "", to: "c1.MTo3")
        #expect(try JSONDecoder().decode(PushResponse.self, from: WireJSON.data { $0.append(echoed) }) == echoed)
        #expect(try WireJSONReader.pushResponse(WireJSON.data { $0.append(echoed) }) == echoed)
        #expect(try WireJSONReader.pushResponse(JSONEncoder().encode(echoed)) == echoed)
        let pull = PullResponse(changes: [LogEntry(position: 3, change: Self.change, schemaVersion: 2)], nextCursor: "c1.x", hasMore: true, serverTime: 9)
        #expect(try JSONDecoder().decode(PullResponse.self, from: WireJSON.data { $0.append(pull) }) == pull)
        let request = PushRequest(schemaVersion: 4, changes: [Self.change])
        #expect(try JSONDecoder().decode(PushRequest.self, from: WireJSON.data { $0.append(request) }) == request)
        // The short answer: a count, and only the outcomes that lost, with their index.
        let short = PushResponse(outcomes: [ChangeOutcome(index: 4, position: nil, applied: [], lost: [lost])], changeCount: 9, serverTime: 3)
        for data in [WireJSON.data { $0.append(short) }, try JSONEncoder().encode(short)] {
            #expect(try JSONDecoder().decode(PushResponse.self, from: data) == short)
            #expect(try WireJSONReader.pushResponse(data) == short)
        }
        let asking = PushRequest(schemaVersion: 4, changes: [Self.change], outcomes: .lost)
        #expect(try JSONDecoder().decode(PushRequest.self, from: WireJSON.data { $0.append(asking) }) == asking)
        #expect(try WireJSONReader.pushRequest(WireJSON.data { $0.append(asking) }) == asking)
        #expect(try WireJSONReader.pushRequest(JSONEncoder().encode(asking)) == asking)
    }

    @Test func askingForEveryOutcomeIsTheSamePushAsNotAsking() throws {
        let plain = PushRequest(schemaVersion: 1, changes: [Self.change])
        var all = plain
        all.outcomes = .all
        var lost = plain
        lost.outcomes = .lost
        #expect(WireJSON.data { $0.append(all) } == WireJSON.data { $0.append(plain) })
        #expect(WireJSON.data { $0.append(lost) } != WireJSON.data { $0.append(plain) })
        var spans: [WireJSON.ChangeSpan] = []
        var withSpans = WireJSON()
        withSpans.append(lost, spans: &spans)
        #expect(Data(withSpans.bytes) == WireJSON.data { $0.append(lost) })
    }

    @Test func indexedOutcomesFitOnlyTheirPush() throws {
        let none = ChangeOutcome(position: 1, applied: ["a"], lost: [])
        #expect(PushResponse(outcomes: [none, none], serverTime: 0).indexedOutcomes(count: 2)?.map(\.index) == [0, 1])
        #expect(PushResponse(outcomes: [none], serverTime: 0).indexedOutcomes(count: 2) == nil)
        func short(_ indices: [Int?], count: Int) -> PushResponse {
            PushResponse(outcomes: indices.map { ChangeOutcome(index: $0, position: nil, applied: [], lost: []) }, changeCount: count, serverTime: 0)
        }
        #expect(short([], count: 5).indexedOutcomes(count: 5)?.isEmpty == true)
        #expect(short([0, 3], count: 5).indexedOutcomes(count: 5)?.map(\.index) == [0, 3])
        #expect(short([0, 3], count: 5).indexedOutcomes(count: 4) == nil, "another count")
        #expect(short([5], count: 5).indexedOutcomes(count: 5) == nil, "out of range")
        #expect(short([-1], count: 5).indexedOutcomes(count: 5) == nil, "out of range")
        #expect(short([3, 1], count: 5).indexedOutcomes(count: 5) == nil, "out of order")
        #expect(short([2, 2], count: 5).indexedOutcomes(count: 5) == nil, "twice")
        #expect(short([nil], count: 5).indexedOutcomes(count: 5) == nil, "no index")
    }

    @Test func theSamePushInAnyMemberOrderHasTheSameCanonicalText() throws {
        let request = PushRequest(schemaVersion: 1, changes: [Self.change])
        let reordered = try JSONDecoder().decode(PushRequest.self, from: JSONEncoder().encode(request))
        #expect(WireJSON.data { $0.append(request) } == WireJSON.data { $0.append(reordered) })
    }

    static let states: [RecordState] = {
        let stamp = HLCTimestamp(physical: 1_800_000_000_000, counter: 65_535, node: .max)
        return [
            RecordState(entity: "Todo", fields: ["title": .init(value: .text("x\n é 🎉"), stamp: stamp)]),
            RecordState(entity: "Todo", fields: [:], created: stamp, deleted: HLCTimestamp(physical: 9, counter: 0, node: 1)),
            RecordState(
                entity: "",
                fields: [
                    "": .init(value: .text(""), stamp: .zero), "n": .init(value: .null, stamp: stamp),
                    "t": .init(value: .bool(true), stamp: stamp), "f": .init(value: .bool(false), stamp: stamp),
                    "i": .init(value: .integer(.min), stamp: stamp), "r": .init(value: .real(-0.5), stamp: stamp),
                    "b": .init(value: .bytes(Data()), stamp: stamp), "B": .init(value: .bytes(Data((0..<300).map { UInt8($0 % 256) })), stamp: stamp),
                    String(repeating: "long", count: 100): .init(value: .real(.greatestFiniteMagnitude), stamp: stamp),
                ], created: stamp),
        ]
    }()

    @Test func recordStatesRoundTripInTheirBinaryForm() throws {
        for state in Self.states {
            #expect(try RecordState(stored: Data(state.binaryBytes())) == state)
        }
    }

    @Test func damagedRecordStatesAreRefusedNotTrusted() throws {
        var random = SystemRandomNumberGenerator()
        for state in Self.states {
            let data = Data(state.binaryBytes())
            // Every truncation, and a byte appended, is refused.
            for length in 0..<data.count {
                #expect(throws: StorageError.self) { try RecordState(stored: data.prefix(length)) }
            }
            #expect(throws: StorageError.self) { try RecordState(stored: data + [0]) }
            // Random damage never crashes: it is refused or reads as some state.
            for _ in 0..<500 {
                var damaged = data
                damaged[Int.random(in: 0..<damaged.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                _ = try? RecordState(stored: damaged)
            }
        }
        #expect(throws: StorageError.self) { try RecordState(stored: Data([2, 0, 0, 0])) }
        #expect(throws: StorageError.self) { try RecordState(stored: Data("{not json".utf8)) }
    }
}

/// A snapshot page's text, written straight from record states, is the text of the changes
/// that make each record (the reference, `Routes.changes(making:)`).
@Suite("Snapshot JSON writer")
struct SnapshotJSONTests {
    static func stamp(_ physical: UInt64, _ counter: UInt16 = 0, node: UInt64 = 7) -> HLCTimestamp {
        HLCTimestamp(physical: physical, counter: counter, node: node)
    }

    static let records: [StoredRecord] = {
        let uri = { (n: Int) in "tandem://d/Todo \"x\"/0000000\(n)" }
        let values = Dictionary(uniqueKeysWithValues: WireJSONTests.tricky.enumerated().map { ("k\($0.offset) \($0.element)", WireValue.text($0.element)) })
            .merging([
                "null": .null, "t": .bool(true), "f": .bool(false), "i": .integer(.min), "r": .real(-1.5e-300), "b": .bytes(Data([0, 255])),
            ]) { a, _ in a }
        var plain = RecordState(entity: "Todo \"x\"", created: stamp(100))
        for (offset, (name, value)) in values.sorted(by: { $0.key < $1.key }).enumerated() {
            plain.fields[name] = .init(value: value, stamp: offset % 3 == 0 ? stamp(100) : stamp(100 + UInt64(offset), 2))
        }
        var linked = RecordState(entity: "Tag", created: stamp(50))
        linked.fields["name"] = .init(value: .text("home"), stamp: stamp(50))
        linked.fields["todos#b"] = .init(value: .bool(true), stamp: stamp(50))
        linked.fields["todos#a"] = .init(value: .bool(false), stamp: stamp(60, 1))
        linked.fields["items#c"] = .init(value: .bool(true), stamp: stamp(70))
        var uncreated = RecordState(entity: "Todo")
        uncreated.fields["title"] = .init(value: .text("t"), stamp: stamp(5))
        uncreated.fields["rank"] = .init(value: .integer(1), stamp: stamp(9))
        let deleted = RecordState(entity: "Todo", created: stamp(1), deleted: stamp(2))
        let huge = RecordState(entity: "Todo", fields: ["title": .init(value: .text("x"), stamp: stamp(1 << 50))], created: stamp(1 << 50))
        return [
            StoredRecord(uri: uri(1), state: plain),
            StoredRecord(uri: uri(2), state: linked),
            StoredRecord(uri: uri(3), state: uncreated),
            StoredRecord(uri: uri(4), state: deleted),
            StoredRecord(uri: uri(5), state: deleted, merged: (uri(1), stamp(2))),
            StoredRecord(uri: uri(6), state: deleted, merged: (uri(1), stamp(3))),
            StoredRecord(uri: uri(7), state: huge),
        ]
    }()

    @Test func snapshotTextIsTheTextOfTheChangesThatMakeEachRecord() throws {
        var fast = WireJSON()
        var reference = WireJSON()
        var count = 0
        var referenceCount = 0
        for record in Self.records {
            count += fast.appendSnapshot(of: record, position: 42, schemaVersion: 3, separated: count > 0)
            for change in Routes.changes(making: record) {
                if referenceCount > 0 { reference.raw(",") }
                reference.logEntry(position: 42, schemaVersion: 3) { $0.append(change) }
                referenceCount += 1
            }
        }
        #expect(count == referenceCount)
        #expect(count == 10)
        #expect(fast.text == reference.text)
        // And it reads back as those changes.
        let entries = try JSONDecoder().decode([LogEntry].self, from: Data("[\(fast.text)]".utf8))
        #expect(entries.map(\.change) == Self.records.flatMap(Routes.changes(making:)))
    }

    @Test func stampsAreWrittenAsTheirText() {
        for stamp in [HLCTimestamp.zero, Self.stamp(0xabc, 0xffff, node: .max), Self.stamp(1 << 48 - 1), Self.stamp(1 << 50, 3)] {
            var json = WireJSON()
            json.stamp(stamp)
            #expect(json.text == "\"\(stamp.description)\"")
        }
    }
}

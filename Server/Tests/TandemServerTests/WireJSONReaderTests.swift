import Foundation
import Testing
import TandemWire

/// The fast reader of wire messages agrees with `JSONDecoder` on valid and broken input.
@Suite("Wire JSON reader")
struct WireJSONReaderTests {
    static let request = PushRequest(schemaVersion: 3, changes: [WireJSONTests.change, WireChange(record: "r", entity: "E", kind: .delete, stamps: ["*": "s"])])

    @Test func readsWhatTheWriterAndJSONEncoderWrite() throws {
        #expect(try WireJSONReader.pushRequest(WireJSON.data { $0.append(Self.request) }) == Self.request)
        #expect(try WireJSONReader.pushRequest(JSONEncoder().encode(Self.request)) == Self.request)
        let pretty = JSONEncoder()
        pretty.outputFormatting = [.prettyPrinted, .withoutEscapingSlashes]
        #expect(try WireJSONReader.pushRequest(pretty.encode(Self.request)) == Self.request)
        let pull = PullResponse(changes: [LogEntry(position: 3, change: WireJSONTests.change, schemaVersion: 2)], nextCursor: "c1.x", hasMore: true, serverTime: 9)
        #expect(try WireJSONReader.pullResponse(WireJSON.data { $0.append(pull) }) == pull)
    }

    @Test func readsPushAnswersAndStampMapsLikeJSONDecoder() throws {
        let answer = PushResponse(
            outcomes: [
                ChangeOutcome(position: 7, applied: ["title"], lost: [LostValue(attribute: "rank", value: .integer(2), stamp: "a", winningValue: .null, winningStamp: "b")]),
                ChangeOutcome(position: nil, applied: [], lost: []),
            ], serverTime: 12)
        for data in [WireJSON.data { $0.append(answer) }, try JSONEncoder().encode(answer)] {
            #expect(try WireJSONReader.pushResponse(data) == answer)
            #expect(try WireJSONReader.pushResponse(data) == JSONDecoder().decode(PushResponse.self, from: data))
        }
        #expect(throws: WireDecodingError.self) { try WireJSONReader.pushResponse(Data(#"{"outcomes": [{"applied": []}], "serverTime": 1}"#.utf8)) }
        #expect(try WireJSONReader.stringMap(#"{"*": "s1", "title": "s\"2"}"#) == ["*": "s1", "title": "s\"2"])
        #expect(throws: WireDecodingError.self) { try WireJSONReader.stringMap(#"{"title": 3}"#) }
        #expect(throws: WireDecodingError.self) { try WireJSONReader.stringMap(#"{"a": "b"} x"#) }
    }

    @Test func escapesUnknownKeysAndNumbersAreReadLikeJSONDecoder() throws {
        let text = #"""
            {"extra": [1, {"a": null}, "x"], "schemaVersion": 1, "changes": [{"record": "r\u00e9\ud83d\ude00\/\n", "entity": "E",
             "kind": "update", "values": {"a": -0, "b": 1.5e3, "c": 12345678901234567890, "d": -9223372036854775808, "e": {"bytes": "AAE="},
             "f": 0.1, "g": 1E-2}, "stamps": {}}]}
            """#
        let data = Data(text.utf8)
        #expect(Self.numeric(try WireJSONReader.pushRequest(data)) == Self.numeric(try JSONDecoder().decode(PushRequest.self, from: data)))
        // The number's form decides its kind: JSONDecoder reads 1.5e3 as the integer 1500.
        #expect(try WireJSONReader.pushRequest(data).changes[0].values["b"] == .real(1500))
        #expect(try WireJSONReader.pushRequest(data).changes[0].values["c"] == .real(12345678901234567890))
        #expect(try WireJSONReader.pushRequest(data).changes[0].values["d"] == .integer(.min))
    }

    /// The request with every integer value read as a real: `JSONDecoder` reads `6.02e+3` as
    /// an integer, the reader as a real (the number's form decides); both are the same number.
    static func numeric(_ request: PushRequest?) -> PushRequest? {
        guard var request else { return nil }
        for index in request.changes.indices {
            request.changes[index].values = request.changes[index].values.mapValues { value in
                if case .integer(let integer) = value { return .real(Double(integer)) }
                return value
            }
        }
        return request
    }

    @Test(arguments: [
        (#"{"schemaVersion":1}"#, "missing key 'changes'"),
        (#"{"schemaVersion":1,"changes":[{"record":"r","entity":"E","kind":"move","values":{},"stamps":{}}]}"#, "changes[0].kind"),
        (#"{"schemaVersion":1,"changes":[{"record":"r","entity":"E","kind":"insert","values":{"a":[1]},"stamps":{}}]}"#, "changes[0].values.a"),
        (#"{"schemaVersion":1,"changes":[{"record":"r","entity":"E","kind":"insert","values":{"a":1e999},"stamps":{}}]}"#, "finite"),
        (#"{"schemaVersion":1,"schemaVersion":2,"changes":[]}"#, "appears twice"),
        (#"{"schemaVersion":1.5,"changes":[]}"#, "schemaVersion"),
        (#"{"schemaVersion":1,"changes":[]} x"#, "after the JSON value"),
        (#"{"schemaVersion":1,"changes":["#, "ends too early"),
        ("", "ends too early"),
    ])
    func brokenInputIsRefusedWithThePathAndTheProblem(_ input: String, _ expected: String) {
        #expect { try WireJSONReader.pushRequest(Data(input.utf8)) } throws: { "\($0)".contains(expected) }
    }

    @Test func invalidUTF8AndRawControlCharactersAreRefused() {
        var bytes = Array(#"{"schemaVersion":1,"changes":[{"record":"r","entity":"E","kind":"insert","values":{"a":"xx"},"stamps":{}}]}"#.utf8)
        let at = bytes.firstIndex(of: UInt8(ascii: "x"))!
        bytes[at] = 0xC3
        #expect(throws: WireDecodingError.self) { try WireJSONReader.pushRequest(Data(bytes)) }
        bytes[at] = 0x01
        #expect(throws: WireDecodingError.self) { try WireJSONReader.pushRequest(Data(bytes)) }
    }

    /// Mutates valid pushes byte by byte: whenever `JSONDecoder` accepts the result, the
    /// reader reads the same request; whenever it refuses, so does the reader. The documented
    /// differences: repeated keys, and invalid JSON that `JSONDecoder` lets through.
    @Test func agreesWithJSONDecoderOnThousandsOfMutatedBodies() throws {
        var generator = SplitMix(seed: 0x7A4D_E301)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]  // the same bytes every run: a failing round replays
        let base = Array(try encoder.encode(Self.request))
        let alphabet = Array(#"{}[]:,"\ 0123456789.eE+-tfnulrsabx"#.utf8) + [0x00, 0xC3, 0xFF, 0x7F]
        var agreed = 0
        for round in 0..<3000 {
            var bytes = base
            for _ in 0..<(1 + Int(generator.next() % 3)) {
                let position = Int(generator.next() % UInt64(bytes.count))
                switch generator.next() % 3 {
                case 0: bytes[position] = alphabet[Int(generator.next() % UInt64(alphabet.count))]
                case 1: bytes.remove(at: position)
                default: bytes.insert(alphabet[Int(generator.next() % UInt64(alphabet.count))], at: position)
                }
            }
            let data = Data(bytes)
            let expected = try? JSONDecoder().decode(PushRequest.self, from: data)
            let actual = try? WireJSONReader.pushRequest(data)
            // JSONDecoder accepts some invalid JSON (`-1.5-300` as a number); the reader refuses
            // whatever JSONSerialization refuses.
            let valid = (try? JSONSerialization.jsonObject(with: data)) != nil
            if let expected, valid {
                #expect(Self.numeric(actual) == Self.numeric(expected) || Self.hasRepeatedKey(data), "round \(round): \(String(decoding: bytes, as: UTF8.self))")
            } else {
                #expect(actual == nil, "round \(round): the reader accepted what JSONDecoder or JSONSerialization refused: \(String(decoding: bytes, as: UTF8.self))")
            }
            if (expected == nil) == (actual == nil) { agreed += 1 }
        }
        #expect(agreed > 2900)
    }

    static func hasRepeatedKey(_ data: Data) -> Bool {
        (try? WireJSONReader.pushRequest(data)) == nil && (try? JSONSerialization.jsonObject(with: data)) != nil
    }
}

/// A small seeded generator (SplitMix64), so a failing round can be replayed.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

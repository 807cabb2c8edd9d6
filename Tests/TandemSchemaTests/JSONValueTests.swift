import Foundation
import Testing
@testable import TandemSchema

@Suite("Fast JSON reading")
struct JSONValueTests {
    /// A schema using every kind of type, relationship field and optional member.
    static let rich = Schema(entities: [
        todo,
        Schema.Entity(
            name: "Folder \u{1F4C1} \"quoted\"\\/",
            attributes: [
                Schema.Attribute(name: "links", type: .collection(typeName: "Array<Link>", element: .composite(people))),
                Schema.Attribute(name: "shape", type: .json(typeName: "Shape", shape: "cases: dot, circle(radius: Double)"), isOptional: true),
                Schema.Attribute(name: "mood", type: .enumeration(.init(typeName: "Mood", rawType: .string, cases: nil))),
            ],
            relationships: [
                Schema.Relationship(name: "todos", destination: "Todo", cardinality: .toMany, inverse: nil, deleteRule: .cascade, isOptional: false),
                Schema.Relationship(name: "parent", destination: "Folder", cardinality: .toOne, inverse: "children", originalName: "up"),
            ]),
    ])

    @Test func readsWhatCodableReads() throws {
        let json = try Self.rich.canonicalJSON()
        #expect(try Schema(canonicalJSON: json) == Self.rich)
        #expect(try JSONDecoder().decode(Schema.self, from: json) == Self.rich)
    }

    @Test func parsesEscapesNumbersAndLiterals() throws {
        let value = try JSONValue.parse(Data(#"{"s": "a\"b\\c\/d\n\u00e9\ud83d\ude00", "n": [-1.5e2, 0, 12], "t": true, "f": false, "z": null}"#.utf8))
        #expect(value["s"] == .string("a\"b\\c/d\né😀"))
        #expect(value["n"] == .array([.number(-150), .number(0), .number(12)]))
        #expect(value["t"] == .bool(true) && value["f"] == .bool(false) && value["z"] == .null)
    }

    @Test(arguments: [
        "", "{", "[1,]", "{\"a\" 1}", "{\"a\": 01}", "\"unterminated", "tru", "[1] 2", "{\"a\": \"\u{01}\"}",
        "\"\\ud800\"", "\"\\x\"", String(repeating: "[", count: 600) + String(repeating: "]", count: 600),
    ])
    func malformedJSONIsASyntaxErrorWithAPosition(_ text: String) {
        #expect(throws: JSONValue.SyntaxError.self) { try JSONValue.parse(Data(text.utf8)) }
        #expect { try Schema(canonicalJSON: Data(text.utf8)) } throws: { error in
            (error as? SchemaError)?.code == .invalidJSON && (error as? SchemaError)?.message.contains("line") == true
        }
    }

    @Test func repeatedMemberNamesInvalidUTF8AndAByteOrderMark() throws {
        let repeated = #"{"formatVersion": 1, "formatVersion": 2, "entities": []}"#
        #expect { try JSONValue.parse(Data(repeated.utf8)) } throws: { "\($0)".contains("appears twice") }
        var invalid = Data(#"{"a": ""#.utf8)
        invalid.append(contentsOf: [0xC3, 0x28])
        invalid.append(contentsOf: Data(#""}"#.utf8))
        #expect { try JSONValue.parse(invalid) } throws: { "\($0)".contains("invalid UTF-8") }
        let withMark = Data([0xEF, 0xBB, 0xBF]) + (try Self.rich.canonicalJSON())
        #expect(try Schema(canonicalJSON: withMark) == Self.rich)
    }

    @Test func aStructuralErrorNamesItsLine() throws {
        let json = "{\n  \"formatVersion\": 1,\n  \"entities\": [\n    {\"name\": \"A\", \"attributes\": 7}\n  ]\n}"
        #expect { try Schema(canonicalJSON: Data(json.utf8)) } throws: { error in
            let message = (error as? SchemaError)?.message ?? ""
            return message.contains("line 4") && message.contains("entities[0].attributes: expected an array, found a number")
        }
    }

    @Test func wrongTypesNameTheirPath() {
        let json = #"{"formatVersion": 1, "entities": [{"name": "A", "attributes": [{"name": "x", "type": {"kind": "scalar", "scalar": "int128"}}]}]}"#
        #expect { try Schema(canonicalJSON: Data(json.utf8)) } throws: { error in
            (error as? SchemaError)?.message.contains("entities[0].attributes[0].type.scalar: unknown value 'int128'") == true
        }
        let missing = #"{"formatVersion": 1, "entities": [{"name": "A"}]}"#
        #expect { try Schema(canonicalJSON: Data(missing.utf8)) } throws: { error in
            (error as? SchemaError)?.message.contains("entities[0]: missing key 'attributes'") == true
        }
    }

    /// Differential check against JSONDecoder: a byte-level mutation of a valid document that
    /// the fast reader accepts is read exactly as JSONDecoder reads it (never a crash). The fast
    /// reader may refuse more (a member name repeated in one object).
    @Test func agreesWithJSONDecoderOnMutatedDocuments() throws {
        let json = Array(try Self.rich.canonicalJSON())
        var generator = SplitMix(seed: 42)
        let replacements = Array("{}[]\":,0-1.eEtfn\\ ab".utf8)
        for _ in 0..<400 {
            var bytes = json
            for _ in 0..<Int(generator.next() % 3 + 1) {
                let index = Int(generator.next() % UInt64(bytes.count))
                switch generator.next() % 3 {
                case 0: bytes.remove(at: index)
                case 1: bytes.insert(replacements[Int(generator.next() % UInt64(replacements.count))], at: index)
                default: bytes[index] = replacements[Int(generator.next() % UInt64(replacements.count))]
                }
            }
            let data = Data(bytes)
            let fast = try? Schema(canonicalJSON: data)
            let codable = try? JSONDecoder().decode(Schema.self, from: data)
            if let fast {
                #expect(fast == codable, "mutated document: \(String(decoding: bytes, as: UTF8.self))")
            } else if codable != nil {
                #expect(throws: JSONValue.SyntaxError.self, "only a repeated member name may be refused where JSONDecoder reads") {
                    try JSONValue.parse(data)
                }
            }
        }
    }
}

/// A small deterministic random number generator for reproducible mutations.
struct SplitMix {
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

public import Foundation

/// One attribute value on the wire: JSON `null`, a boolean, an integer, a real number, a
/// string, or bytes as `{"bytes": "<base64>"}`.
///
/// ```swift
/// let values: [String: WireValue] = ["title": .text("Buy milk"), "people.age": .integer(31), "weight": .null]
/// ```
public enum WireValue: Sendable, Hashable, Codable {
    case null
    case bool(Bool)
    case integer(Int64)
    case real(Double)
    case text(String)
    case bytes(Data)

    private enum BytesKey: String, CodingKey { case bytes }

    public init(from decoder: any Decoder) throws {
        if let keyed = try? decoder.container(keyedBy: BytesKey.self) {
            let text = try keyed.decode(String.self, forKey: .bytes)
            guard let data = Data(base64Encoded: text) else {
                throw DecodingError.dataCorruptedError(forKey: .bytes, in: keyed, debugDescription: "bytes must be base64")
            }
            self = .bytes(data)
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() { self = .null; return }
        if let flag = try? single.decode(Bool.self) { self = .bool(flag); return }
        if let integer = try? single.decode(Int64.self) { self = .integer(integer); return }
        if let real = try? single.decode(Double.self) {
            guard real.isFinite else { throw DecodingError.dataCorruptedError(in: single, debugDescription: "numbers must be finite") }
            self = .real(real)
            return
        }
        if let text = try? single.decode(String.self) { self = .text(text); return }
        throw DecodingError.dataCorruptedError(in: single, debugDescription: "a value is null, a boolean, a number, a string or {\"bytes\": base64}")
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .bytes(let data):
            var keyed = encoder.container(keyedBy: BytesKey.self)
            try keyed.encode(data.base64EncodedString(), forKey: .bytes)
        case .null:
            var single = encoder.singleValueContainer()
            try single.encodeNil()
        case .bool(let flag):
            var single = encoder.singleValueContainer()
            try single.encode(flag)
        case .integer(let integer):
            var single = encoder.singleValueContainer()
            try single.encode(integer)
        case .real(let real):
            var single = encoder.singleValueContainer()
            try single.encode(real)
        case .text(let text):
            var single = encoder.singleValueContainer()
            try single.encode(text)
        }
    }
}

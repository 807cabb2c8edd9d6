public import Foundation

/// A parsed JSON document, for readers that need speed more than `Codable`'s generality.
///
/// ``Schema/init(canonicalJSON:)`` reads schemas through it: on a 1 000-entity schema it is
/// several times faster than `JSONDecoder`, which matters to `tandem schema check` in CI and
/// to the sync server checking every registration.
///
/// ```swift
/// let value = try JSONValue.parse(Data(#"{"a": [1, "x", null]}"#.utf8))
/// value["a"]?[1]   // .string("x")
/// ```
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    /// Members in document order (objects in schema JSON are small; lookups are linear).
    case object([Member])

    /// One member of an object.
    public struct Member: Sendable, Hashable {
        public var key: String
        public var value: JSONValue
        /// The byte offset of the member's name in the document, for error messages.
        public var offset: Int

        public init(key: String, value: JSONValue, offset: Int = 0) {
            self.key = key
            self.value = value
            self.offset = offset
        }
    }

    /// The member named `key` of an object, else `nil`.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// The element at `index` of an array, else `nil`.
    public subscript(index: Int) -> JSONValue? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }

    /// What the value is, for error messages: `a string`, `an object`…
    public var kindDescription: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// Parses a UTF-8 JSON document (RFC 8259; a leading byte order mark is skipped).
    ///
    /// - Throws: ``JSONValue/SyntaxError`` with the line and column of the problem: malformed
    ///   JSON, invalid UTF-8, a member name repeated in one object, nesting deeper than 512.
    public static func parse(_ data: Data) throws -> JSONValue {
        try data.withUnsafeBytes { raw in
            var parser = JSONParser(bytes: raw.bindMemory(to: UInt8.self))
            return try parser.document()
        }
    }

    /// The 1-based line and column of a byte offset in `data`.
    public static func position(of offset: Int, in data: Data) -> (line: Int, column: Int) {
        position(after: data.prefix(offset))
    }

    /// The 1-based line and column just after the bytes of `prefix`.
    static func position(after prefix: some Sequence<UInt8>) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        for byte in prefix {
            if byte == 0x0A {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return (line, column)
    }

    /// Malformed JSON, with where it is.
    public struct SyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
        public var message: String
        public var line: Int
        public var column: Int
        public var description: String { "line \(line), column \(column): \(message)" }
    }
}

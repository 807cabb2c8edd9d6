/// Flattens a Codable struct into the column values of a composite attribute.
///
/// Fields the value does not encode (an optional left `nil` by `encodeIfPresent`) stay NULL.
final class CompositeEncoder: Encoder {
    let layout: CompositeLayout
    let base: Int32
    let output: Output
    let coders: CoderCache
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    final class Output {
        var values: [DatabaseValue]
        /// Set when the value encodes itself in a shape a composite cannot hold (Encoder
        /// methods cannot throw, so the failure is thrown after encoding).
        var failure: String?
        init(count: Int) { values = Array(repeating: .null, count: count) }
    }

    init(layout: CompositeLayout, base: Int32, output: Output, coders: CoderCache) {
        self.layout = layout
        self.base = base
        self.output = output
        self.coders = coders
    }

    /// The column values of `value` (an instance of the composite or an `Optional` of it).
    static func values<T: Encodable>(of value: T, layout: CompositeLayout, columnCount: Int, coders: CoderCache) throws -> [DatabaseValue] {
        let output = Output(count: columnCount)
        if let optional = value as? any OptionalValue, optional.wrappedValue == nil {
            return output.values
        }
        try value.encode(to: CompositeEncoder(layout: layout, base: 0, output: output, coders: coders))
        if let failure = output.failure { throw ColumnDecodingFailure(failure) }
        return output.values
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if let presence = layout.presenceOffset {
            output.values[Int(base + presence)] = 1.databaseValue
        }
        return KeyedEncodingContainer(Container<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        output.failure =
            output.failure ?? "the value encodes as a list, but its stored composite has fields \(layout.fieldOrder.joined(separator: ", ")); its Encodable and Decodable conformances must agree"
        return Discard(encoder: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValue(encoder: self)
    }

    fileprivate func encode<T: Encodable>(_ value: T, forKey key: String) throws {
        guard let field = layout.fields[key] else {
            throw ColumnDecodingFailure("field '\(key)' is not in the stored composite (fields: \(layout.fieldOrder.joined(separator: ", ")))")
        }
        switch field {
        case .leaf(let offset, let type):
            output.values[Int(base + offset)] = try LeafCoding.databaseValue(of: value, as: type, coders: coders)
        case .composite(let nested):
            if let optional = value as? any OptionalValue, optional.wrappedValue == nil { return }
            try value.encode(to: CompositeEncoder(layout: nested, base: base, output: output, coders: coders))
        }
    }

    private struct Container<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let encoder: CompositeEncoder
        var codingPath: [any CodingKey] { [] }

        mutating func encodeNil(forKey key: Key) throws {}
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            try encoder.encode(value, forKey: key.stringValue)
        }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            encoder.output.failure = encoder.output.failure ?? "hand-written nested containers ('\(key.stringValue)') are not supported in composites; use a nested Codable struct"
            return KeyedEncodingContainer(Container<NestedKey>(encoder: encoder))
        }
        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            encoder.output.failure = encoder.output.failure ?? "hand-written unkeyed containers ('\(key.stringValue)') are not supported in composites; use an array property"
            return Discard(encoder: encoder)
        }
        mutating func superEncoder() -> any Encoder { encoder }
        mutating func superEncoder(forKey key: Key) -> any Encoder { encoder }
    }

    /// Swallows what a value encodes in a shape the composite cannot hold; the encoder's
    /// `output.failure` already says why.
    private struct Discard: UnkeyedEncodingContainer {
        let encoder: CompositeEncoder
        var codingPath: [any CodingKey] { [] }
        var count = 0
        mutating func encodeNil() throws { count += 1 }
        mutating func encode<T: Encodable>(_ value: T) throws { count += 1 }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            KeyedEncodingContainer(Container<NestedKey>(encoder: encoder))
        }
        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { Discard(encoder: encoder) }
        mutating func superEncoder() -> any Encoder { encoder }
    }

    /// `Optional<Composite>.encode(to:)` asks for a single-value container.
    private struct SingleValue: SingleValueEncodingContainer {
        let encoder: CompositeEncoder
        var codingPath: [any CodingKey] { [] }
        mutating func encodeNil() throws {}
        mutating func encode<T: Encodable>(_ value: T) throws {
            try value.encode(to: encoder)
        }
    }
}

internal import GRDBSQLite

/// Rebuilds a Codable struct from the columns of a composite attribute in the current row.
final class CompositeDecoder: Decoder {
    let layout: CompositeLayout
    let statement: OpaquePointer
    /// The statement column of the attribute's first column.
    let base: Int32
    unowned let coders: CoderCache
    /// The next field expected, in coding order.
    private var cursor = 0
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(layout: CompositeLayout, statement: OpaquePointer, base: Int32, coders: CoderCache) {
        self.layout = layout
        self.statement = statement
        self.base = base
        self.coders = coders
    }

    func isNull(_ offset: Int32) -> Bool {
        sqlite3_column_type(statement, base + offset) == SQLITE_NULL
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        cursor = 0
        return KeyedDecodingContainer(Container<Key>(decoder: self))
    }

    /// The field named `key`: the one at the cursor when keys come in coding order.
    @inline(__always)
    fileprivate func field(_ key: String) -> CompositeLayout.Field? {
        let ordered = layout.orderedFields
        if cursor < ordered.count, ordered[cursor].name == key {
            cursor += 1
            return ordered[cursor - 1].field
        }
        return layout.fields[key]
    }

    /// A scalar leaf read straight from its column.
    fileprivate func scalar<S: ColumnValue>(_: S.Type, forKey key: String) throws -> S {
        guard case .leaf(let offset, _) = field(key) else { return try decode(S.self, forKey: key) }
        guard !isNull(offset) else { throw ColumnDecodingFailure("field '\(key)' is NULL but \(S.self) is not optional") }
        return try S(sqliteColumn: base + offset, of: statement)
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw ColumnDecodingFailure("a composite attribute is decoded field by field")
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleValue(decoder: self)
    }

    fileprivate func decodeNil(forKey key: String) -> Bool {
        // Peek without moving the cursor: decode(_:forKey:) follows for the same key.
        switch layout.fields[key] {
        case .leaf(let offset, _): return isNull(offset)
        case .composite(let nested): return nested.presenceOffset.map(isNull) ?? false
        case nil: return true
        }
    }

    fileprivate func decode<T: Decodable>(_ type: T.Type, forKey key: String) throws -> T {
        switch field(key) {
        case .leaf(let offset, let fieldType):
            guard !isNull(offset) else {
                throw ColumnDecodingFailure("field '\(key)' is NULL but \(T.self) is not optional")
            }
            return try leaf(T.self, fieldType, offset)
        case .composite(let nested):
            return try T(from: CompositeDecoder(layout: nested, statement: statement, base: base, coders: coders))
        case nil:
            throw ColumnDecodingFailure("field '\(key)' is not in the stored composite (fields: \(layout.fieldOrder.joined(separator: ", ")))")
        }
    }

    /// An optional field in one step (the synthesized `init(from:)` calls `decodeIfPresent`,
    /// which would otherwise look the key up three times): `nil` for NULL or a field the
    /// stored composite lacks.
    fileprivate func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: String) throws -> T? {
        switch field(key) {
        case .leaf(let offset, let fieldType):
            return isNull(offset) ? nil : try leaf(T.self, fieldType, offset)
        case .composite(let nested):
            if nested.presenceOffset.map(isNull) ?? false { return nil }
            return try T(from: CompositeDecoder(layout: nested, statement: statement, base: base, coders: coders))
        case nil:
            return nil
        }
    }

    /// ``decodeIfPresent(_:forKey:)`` of a scalar read straight from its column.
    fileprivate func scalarIfPresent<S: ColumnValue>(_: S.Type, forKey key: String) throws -> S? {
        guard case .leaf(let offset, _) = field(key) else { return nil }
        return isNull(offset) ? nil : try S(sqliteColumn: base + offset, of: statement)
    }

    /// A non-NULL leaf, through ``LeafCoding``.
    @inline(__always)
    private func leaf<T: Decodable>(_: T.Type, _ fieldType: Schema.AttributeType, _ offset: Int32) throws -> T {
        try LeafCoding.read(T.self, as: fieldType, column: base + offset, statement: statement, coders: coders)
    }

    private struct Container<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let decoder: CompositeDecoder
        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] { decoder.layout.fieldOrder.compactMap { Key(stringValue: $0) } }
        func contains(_ key: Key) -> Bool { decoder.layout.fields[key.stringValue] != nil }
        func decodeNil(forKey key: Key) throws -> Bool { decoder.decodeNil(forKey: key.stringValue) }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            try decoder.decode(T.self, forKey: key.stringValue)
        }
        func decode(_ type: String.Type, forKey key: Key) throws -> String { try decoder.scalar(type, forKey: key.stringValue) }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try decoder.scalar(type, forKey: key.stringValue) }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try decoder.scalar(type, forKey: key.stringValue) }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try decoder.scalar(type, forKey: key.stringValue) }
        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try decoder.scalar(type, forKey: key.stringValue) }
        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
            try decoder.decodeIfPresent(T.self, forKey: key.stringValue)
        }
        func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try decoder.scalarIfPresent(type, forKey: key.stringValue) }
        func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try decoder.scalarIfPresent(type, forKey: key.stringValue) }
        func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try decoder.scalarIfPresent(type, forKey: key.stringValue) }
        func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try decoder.scalarIfPresent(type, forKey: key.stringValue) }
        func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try decoder.scalarIfPresent(type, forKey: key.stringValue) }
        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
            throw ColumnDecodingFailure("hand-written nested containers are not supported in composites")
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            throw ColumnDecodingFailure("hand-written unkeyed containers are not supported in composites")
        }
        func superDecoder() throws -> any Decoder { decoder }
        func superDecoder(forKey key: Key) throws -> any Decoder { decoder }
    }

    /// `Optional<Composite>.init(from:)` asks for a single-value container.
    private struct SingleValue: SingleValueDecodingContainer {
        let decoder: CompositeDecoder
        var codingPath: [any CodingKey] { [] }
        func decodeNil() -> Bool { decoder.layout.presenceOffset.map(decoder.isNull) ?? false }
        func decode<T: Decodable>(_ type: T.Type) throws -> T { try T(from: decoder) }
        func decode(_ type: Bool.Type) throws -> Bool { throw mismatch(type) }
        func decode(_ type: String.Type) throws -> String { throw mismatch(type) }
        func decode(_ type: Double.Type) throws -> Double { throw mismatch(type) }
        func decode(_ type: Float.Type) throws -> Float { throw mismatch(type) }
        func decode(_ type: Int.Type) throws -> Int { throw mismatch(type) }
        func decode(_ type: Int8.Type) throws -> Int8 { throw mismatch(type) }
        func decode(_ type: Int16.Type) throws -> Int16 { throw mismatch(type) }
        func decode(_ type: Int32.Type) throws -> Int32 { throw mismatch(type) }
        func decode(_ type: Int64.Type) throws -> Int64 { throw mismatch(type) }
        func decode(_ type: UInt.Type) throws -> UInt { throw mismatch(type) }
        func decode(_ type: UInt8.Type) throws -> UInt8 { throw mismatch(type) }
        func decode(_ type: UInt16.Type) throws -> UInt16 { throw mismatch(type) }
        func decode(_ type: UInt32.Type) throws -> UInt32 { throw mismatch(type) }
        func decode(_ type: UInt64.Type) throws -> UInt64 { throw mismatch(type) }
        private func mismatch(_ type: Any.Type) -> ColumnDecodingFailure {
            ColumnDecodingFailure("a composite attribute cannot be decoded as a single \(type)")
        }
    }
}

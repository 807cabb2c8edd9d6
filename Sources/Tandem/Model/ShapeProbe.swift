/// A `Decoder` that discovers the fields of a Codable struct without an instance.
///
/// It answers every `decode(_:forKey:)` with a placeholder value of the requested type and
/// records the field's name, storage shape and optionality (a `decodeIfPresent` shows up as
/// `decodeNil(forKey:)` followed by `decode(_:forKey:)` for the same key). A type whose
/// decoding asks for `allKeys` (synthesized enums), a single-value or an unkeyed container
/// is not a composite.
final class ShapeProbe: Decoder {
    let path: String
    private(set) var fields: [Schema.Field] = []
    private(set) var usedKeyedContainer = false
    private(set) var usedOtherContainer = false
    fileprivate var askedForAllKeys = false
    fileprivate var pendingOptionalKey: String?

    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// How many collections enclose the probed type.
    let collections: Int

    init(path: String, collections: Int = 0) {
        self.path = path
        self.collections = collections
    }

    /// Whether the decoded type looked like a struct read field by field.
    var isKeyedStruct: Bool { usedKeyedContainer && !askedForAllKeys && !usedOtherContainer }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        usedKeyedContainer = true
        return KeyedDecodingContainer(ProbeContainer<Key>(probe: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        usedOtherContainer = true
        throw ProbeStop()
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        usedOtherContainer = true
        throw ProbeStop()
    }

    fileprivate func record<T: Decodable>(_ type: T.Type, key: String) throws -> T {
        let optional = pendingOptionalKey == key
        pendingOptionalKey = nil
        let fieldPath = "\(path).\(key)"
        let resolved = try AttributeTypeResolver.resolve(T.self, path: fieldPath, collections: collections)
        if !fields.contains(where: { $0.name == key }) {
            fields.append(Schema.Field(name: key, type: resolved.type, isOptional: optional || resolved.isOptional))
        }
        guard let sample = resolved.sample as? T else {
            throw StoreError(
                .invalidModel,
                "\(fieldPath) has type \(T.self), which Tandem cannot store inside a composite: make it CaseIterable (for enums), or make it a top-level attribute (stored as JSON)")
        }
        return sample
    }
}

/// Thrown to stop decoding a type that is not a composite.
struct ProbeStop: Error {}

private struct ProbeContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let probe: ShapeProbe
    var codingPath: [any CodingKey] { [] }

    var allKeys: [Key] {
        probe.askedForAllKeys = true
        return []
    }

    func contains(_ key: Key) -> Bool { true }

    func decodeNil(forKey key: Key) throws -> Bool {
        probe.pendingOptionalKey = key.stringValue
        return false
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try probe.record(T.self, key: key.stringValue)
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try probe.record(type, key: key.stringValue) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try probe.record(type, key: key.stringValue) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try probe.record(type, key: key.stringValue) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try probe.record(type, key: key.stringValue) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try probe.record(type, key: key.stringValue) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try probe.record(type, key: key.stringValue) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try probe.record(type, key: key.stringValue) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try probe.record(type, key: key.stringValue) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try probe.record(type, key: key.stringValue) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try probe.record(type, key: key.stringValue) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try probe.record(type, key: key.stringValue) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try probe.record(type, key: key.stringValue) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try probe.record(type, key: key.stringValue) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try probe.record(type, key: key.stringValue) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        throw StoreError(.invalidModel, "\(probe.path).\(key.stringValue): hand-written nested containers are not supported in composites; use a nested Codable struct")
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        throw StoreError(.invalidModel, "\(probe.path).\(key.stringValue): hand-written unkeyed containers are not supported in composites; use an array property")
    }

    func superDecoder() throws -> any Decoder { throw ProbeStop() }
    func superDecoder(forKey key: Key) throws -> any Decoder { throw ProbeStop() }
}

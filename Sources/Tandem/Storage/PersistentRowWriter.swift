internal import GRDBSQLite

/// Binds a model's attributes to an INSERT or UPDATE statement, for
/// ``PersistentModel/encodePersistentValues(to:)``.
///
/// ```swift
/// func encodePersistentValues(to row: inout PersistentRowWriter) throws {
///     try row.encode(self._title, at: 0)
/// }
/// ```
///
/// Attributes that the statement does not update are skipped. Throws a ``StoreError`` with
/// code ``StoreError/Code/invalidValue`` when a value cannot be stored (an `UInt64` above
/// `Int64.max`, a composite whose fields do not match the schema).
public struct PersistentRowWriter {
    let statement: OpaquePointer
    let mapping: EntityMapping
    /// First parameter of each attribute, 0 when the attribute is not written.
    let parameters: [Int32]
    let coders: CoderCache
    /// The encoded object's stored foreign keys and loaded relationships (for to-ones).
    var foreignKeys: [Int: UUID] = [:]
    var loadedRelationships = ChangeSet()

    private func failure(_ attribute: Int, _ reason: String) -> StoreError {
        StoreError(
            .invalidValue, "the value cannot be stored: \(reason)",
            entity: mapping.name, attribute: mapping.properties[attribute].name)
    }

    @inline(__always)
    private func check(_ code: Int32, _ attribute: Int) throws {
        if code != SQLITE_OK { throw failure(attribute, "sqlite3_bind failed with code \(code)") }
    }

    /// Writes a scalar attribute.
    public mutating func encode<T: ColumnValue>(_ value: T, at attribute: Int) throws {
        let parameter = parameters[attribute]
        guard parameter != 0 else { return }
        do { try check(try value.sqliteBind(to: statement, at: parameter), attribute) } catch let error as ColumnDecodingFailure {
            throw failure(attribute, error.reason)
        }
    }

    /// Writes an optional scalar attribute.
    public mutating func encode<T: ColumnValue>(_ value: T?, at attribute: Int) throws {
        let parameter = parameters[attribute]
        guard parameter != 0 else { return }
        guard let value else { return try check(sqlite3_bind_null(statement, parameter), attribute) }
        try encode(value, at: attribute)
    }

    /// Writes an enum by raw value.
    public mutating func encode<T: RawRepresentable & Encodable>(_ value: T, at attribute: Int) throws where T.RawValue: ColumnValue {
        try encode(value.rawValue, at: attribute)
    }

    /// Writes an optional enum by raw value.
    public mutating func encode<T: RawRepresentable & Encodable>(_ value: T?, at attribute: Int) throws where T.RawValue: ColumnValue {
        try encode(value?.rawValue, at: attribute)
    }

    /// Writes a composite, collection or other Codable attribute.
    public mutating func encode<T: Encodable>(_ value: T, at attribute: Int) throws {
        let parameter = parameters[attribute]
        guard parameter != 0 else { return }
        for (offset, databaseValue) in try Self.databaseValues(of: value, attribute: attribute, mapping: mapping, coders: coders).enumerated() {
            try check(databaseValue.sqliteBind(to: statement, at: parameter + Int32(offset)), attribute)
        }
    }

    /// The column values of an attribute value whose static type is not known.
    static func databaseValues(of value: Any, attribute: Int, mapping: EntityMapping, coders: CoderCache) throws -> [DatabaseValue] {
        guard let type = mapping.attribute(ofProperty: attribute)?.type else {
            throw StoreError(.misuse, "property \(attribute) of \(mapping.name) is a relationship, not an attribute", entity: mapping.name)
        }
        do {
            if let layout = mapping.composites[attribute] {
                guard let encodable = value as? any Encodable else {
                    throw ColumnDecodingFailure("\(Swift.type(of: value)) is not Encodable")
                }
                return try CompositeEncoder.values(of: encodable, layout: layout, columnCount: Int(mapping.columnCount[attribute]), coders: coders)
            }
            return [try LeafCoding.databaseValue(of: value, as: type, coders: coders)]
        } catch let error as ColumnDecodingFailure {
            throw StoreError(
                .invalidValue, "the value cannot be stored: \(error.reason)",
                entity: mapping.name, attribute: mapping.properties[attribute].name)
        }
    }
}

internal import GRDBSQLite

/// The current row of a fetch, read attribute by attribute by a model's
/// ``PersistentModel/init(persistentRow:)``.
///
/// ```swift
/// init(persistentRow row: PersistentRow) throws {
///     self._title = try row.decode(at: 0)
///     self._people = try row.decode(at: 1)
/// }
/// ```
///
/// Each `decode(at:)` throws a ``StoreError`` with code ``StoreError/Code/invalidValue``
/// naming the entity and attribute when the stored value does not fit the property's type.
public struct PersistentRow {
    let statement: OpaquePointer
    let mapping: EntityMapping
    let coders: CoderCache

    @inline(__always)
    private func column(_ attribute: Int) -> Int32 { mapping.columnStart[attribute] }

    @inline(__always)
    private func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }

    private func failure(_ attribute: Int, _ reason: String) -> StoreError {
        StoreError(
            .invalidValue, "the stored value cannot be read: \(reason)",
            entity: mapping.name, attribute: mapping.properties[attribute].name)
    }

    /// Reads an attribute of any supported type; the type is inferred from the assignment.
    ///
    /// Swift cannot rank overloads that differ only in their return type's constraints, so
    /// this one entry point dispatches on the attribute's reader, decided once per container
    /// from the property's declared type (the same `T`, checked by metatype identity).
    public func decode<T: Decodable>(at attribute: Int) throws -> T {
        let column = column(attribute)
        let reader = mapping.readers[attribute]
        guard ObjectIdentifier(T.self) == mapping.valueTypes[attribute] else {
            return try decodeOther(T.self, attribute, column)
        }
        switch reader {
        case .string: return unsafeBitCast(try scalar(String.self, attribute, column), to: T.self)
        case .int: return unsafeBitCast(try scalar(Int.self, attribute, column), to: T.self)
        case .double: return unsafeBitCast(try scalar(Double.self, attribute, column), to: T.self)
        case .bool: return unsafeBitCast(try scalar(Bool.self, attribute, column), to: T.self)
        case .date: return unsafeBitCast(try scalar(Date.self, attribute, column), to: T.self)
        case .int64: return unsafeBitCast(try scalar(Int64.self, attribute, column), to: T.self)
        case .optionalString: return unsafeBitCast(try optionalScalar(String.self, attribute, column), to: T.self)
        case .optionalInt: return unsafeBitCast(try optionalScalar(Int.self, attribute, column), to: T.self)
        case .optionalDouble: return unsafeBitCast(try optionalScalar(Double.self, attribute, column), to: T.self)
        case .optionalDate: return unsafeBitCast(try optionalScalar(Date.self, attribute, column), to: T.self)
        case .column(let reader):
            do { return try reader.read(T.self, statement, column) } catch { throw failure(attribute, error.reason) }
        case .other:
            return try decodeOther(T.self, attribute, column)
        }
    }

    @inline(__always)
    private func scalar<S: ColumnValue>(_: S.Type, _ attribute: Int, _ column: Int32) throws -> S {
        guard !isNull(column) else { throw failure(attribute, "NULL in a non-optional \(S.self) attribute") }
        do { return try S(sqliteColumn: column, of: statement) } catch { throw failure(attribute, error.reason) }
    }

    @inline(__always)
    private func optionalScalar<S: ColumnValue>(_: S.Type, _ attribute: Int, _ column: Int32) throws -> S? {
        if isNull(column) { return nil }
        do { return try S(sqliteColumn: column, of: statement) } catch { throw failure(attribute, error.reason) }
    }

    /// Reads an enum, composite, collection or other Codable attribute.
    private func decodeOther<T: Decodable>(_: T.Type, _ attribute: Int, _ column: Int32) throws -> T {
        do {
            if mapping.composites[attribute] != nil {
                return try T(from: coders.compositeDecoder(attribute: attribute, mapping: mapping, statement: statement, base: column))
            }
            if isNull(column) {
                guard let none = (T.self as? any OptionalMarker.Type)?.none as? T else {
                    throw ColumnDecodingFailure("NULL in a non-optional \(T.self) attribute")
                }
                return none
            }
            guard let type = mapping.attribute(ofProperty: attribute)?.type else {
                throw ColumnDecodingFailure("property \(attribute) is a relationship; decode it as a model or an array of models")
            }
            return try LeafCoding.read(
                T.self, as: type, column: column,
                statement: statement, coders: coders)
        } catch let error as StoreError {
            throw error
        } catch let error as ColumnDecodingFailure {
            throw failure(attribute, error.reason)
        } catch {
            throw failure(attribute, "\(error)")
        }
    }
}

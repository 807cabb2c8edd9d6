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
        StoreError(.invalidValue, "the stored value cannot be read: \(reason)",
                   entity: mapping.name, attribute: mapping.entity.attributes[attribute].name)
    }

    /// Reads a scalar attribute.
    public func decode<T: ColumnValue>(at attribute: Int) throws -> T {
        let column = column(attribute)
        guard !isNull(column) else { throw failure(attribute, "NULL in a non-optional \(T.self) attribute") }
        do { return try T(sqliteColumn: column, of: statement) } catch { throw failure(attribute, error.reason) }
    }

    /// Reads an optional scalar attribute.
    public func decode<T: ColumnValue>(at attribute: Int) throws -> T? {
        let column = column(attribute)
        if isNull(column) { return nil }
        do { return try T(sqliteColumn: column, of: statement) } catch { throw failure(attribute, error.reason) }
    }

    /// Reads an enum stored by raw value.
    public func decode<T: RawRepresentable & Decodable>(at attribute: Int) throws -> T where T.RawValue: ColumnValue {
        let column = column(attribute)
        guard !isNull(column) else { throw failure(attribute, "NULL in a non-optional \(T.self) attribute") }
        return try raw(attribute, column)
    }

    /// Reads an optional enum stored by raw value.
    public func decode<T: RawRepresentable & Decodable>(at attribute: Int) throws -> T? where T.RawValue: ColumnValue {
        let column = column(attribute)
        if isNull(column) { return nil }
        return try raw(attribute, column) as T
    }

    private func raw<T: RawRepresentable>(_ attribute: Int, _ column: Int32) throws -> T where T.RawValue: ColumnValue {
        let raw: T.RawValue
        do { raw = try T.RawValue(sqliteColumn: column, of: statement) } catch { throw failure(attribute, error.reason) }
        guard let value = T(rawValue: raw) else { throw failure(attribute, "\(T.self) has no case with raw value \(raw)") }
        return value
    }

    /// Reads a composite, collection or other Codable attribute.
    public func decode<T: Decodable>(at attribute: Int) throws -> T {
        let column = column(attribute)
        do {
            if let layout = mapping.composites[attribute] {
                return try T(from: CompositeDecoder(layout: layout, statement: statement, base: column, coders: coders))
            }
            if isNull(column) {
                guard let none = (T.self as? any OptionalMarker.Type)?.none as? T else {
                    throw ColumnDecodingFailure("NULL in a non-optional \(T.self) attribute")
                }
                return none
            }
            return try LeafCoding.read(T.self, as: mapping.entity.attributes[attribute].type, column: column,
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

internal import GRDBSQLite

/// Reads one attribute's column into the property's own type, with no boxing or dynamic cast
/// per row: built once per container for an attribute whose type the fixed readers of
/// ``AttributeReader`` do not cover (another scalar, an enum, an `Optional` of either).
///
/// ```swift
/// let reader: any ColumnReading = EnumColumnReader<Priority, Int>()
/// let priority: Priority = try reader.read(Priority.self, statement, 5)
/// ```
///
/// `read` is called only with `T` the type the reader was built for (``PersistentRow`` checks
/// the property's metatype first), which is what makes its `unsafeBitCast`s sound.
protocol ColumnReading: Sendable {
    /// The column's value; the column may be NULL.
    ///
    /// - Throws: ``ColumnDecodingFailure`` for NULL in a non-optional attribute, a value of
    ///   the wrong type, or a raw value no enum case has.
    func read<T>(_: T.Type, _ statement: OpaquePointer, _ column: Int32) throws(ColumnDecodingFailure) -> T
}

/// A scalar attribute (`UUID`, `Int16`, `Float`, `Data`…), or its `Optional`.
struct ScalarColumnReader<S: ColumnValue>: ColumnReading {
    let optional: Bool

    func read<T>(_: T.Type, _ statement: OpaquePointer, _ column: Int32) throws(ColumnDecodingFailure) -> T {
        if sqlite3_column_type(statement, column) == SQLITE_NULL {
            guard optional else { throw ColumnDecodingFailure("NULL in a non-optional \(S.self) attribute") }
            return unsafeBitCast(S?.none, to: T.self)
        }
        let value = try S(sqliteColumn: column, of: statement)
        return optional ? unsafeBitCast(S?.some(value), to: T.self) : unsafeBitCast(value, to: T.self)
    }
}

/// An enum with a storable raw value (`R`, the same type as `E.RawValue`), or its `Optional`.
struct EnumColumnReader<E: RawRepresentable, R: ColumnValue>: ColumnReading {
    let optional: Bool

    func read<T>(_: T.Type, _ statement: OpaquePointer, _ column: Int32) throws(ColumnDecodingFailure) -> T {
        if sqlite3_column_type(statement, column) == SQLITE_NULL {
            guard optional else { throw ColumnDecodingFailure("NULL in a non-optional \(E.self) attribute") }
            return unsafeBitCast(E?.none, to: T.self)
        }
        let raw = unsafeBitCast(try R(sqliteColumn: column, of: statement), to: E.RawValue.self)
        guard let value = E(rawValue: raw) else { throw ColumnDecodingFailure("\(E.self) has no case with raw value \(raw)") }
        return optional ? unsafeBitCast(E?.some(value), to: T.self) : unsafeBitCast(value, to: T.self)
    }
}

internal import GRDBSQLite

/// A Swift value stored in a single SQLite column: the scalar rows of the storage mapping.
///
/// Tandem conforms every supported scalar (all integer widths, `Bool`, `Double`, `Float`,
/// `String`, `Date`, `UUID`, `Data`, `URL`, `Decimal`). Dates are stored as REAL seconds
/// since 1970, UUIDs as lowercase text, Decimals as text, URLs as their absolute string.
///
/// ```swift
/// Int.scalarType        // .int  → INTEGER column
/// ```
public protocol ColumnValue: Codable {
    /// The schema's name for this type.
    static var scalarType: Schema.ScalarType { get }
    /// A value used when discovering the shape of a composite (never stored).
    static var placeholder: Self { get }
    /// Reads the value from column `index` of the current row; the column is not NULL.
    init(sqliteColumn index: Int32, of statement: OpaquePointer) throws(ColumnDecodingFailure)
    /// Binds the value to parameter `index` (1-based).
    func sqliteBind(to statement: OpaquePointer, at index: Int32) throws(ColumnDecodingFailure) -> Int32
    /// The value as Tandem stores it, for SQL arguments (predicates, raw SQL).
    var sqlArgument: DatabaseValue { get }
}

/// Why a column could not be read into, or a value written as, a scalar.
public struct ColumnDecodingFailure: Error, Sendable {
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
}

// SQLITE_TRANSIENT is a C macro Swift does not import.
let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

@inline(__always)
func readText(_ statement: OpaquePointer, _ index: Int32) -> String {
    guard let text = sqlite3_column_text(statement, index) else { return "" }
    let count = Int(sqlite3_column_bytes(statement, index))
    return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
}

extension UUIDText {
    /// The UUID in text column `index` of the current row; `nil` for NULL or malformed text.
    @inline(__always)
    static func column(_ index: Int32, of statement: OpaquePointer) -> UUID? {
        guard let text = sqlite3_column_text(statement, index) else { return nil }
        return parse(UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(statement, index))))
    }
}

@inline(__always)
func bindText(_ value: String, _ statement: OpaquePointer, _ index: Int32) -> Int32 {
    var value = value
    return value.withUTF8 { buffer in
        // A NULL pointer would bind SQL NULL: give the empty string a real address.
        guard let base = buffer.baseAddress else { return sqlite3_bind_text(statement, index, "", 0, sqliteTransient) }
        return base.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
            sqlite3_bind_text(statement, index, $0, Int32(buffer.count), sqliteTransient)
        }
    }
}

@inline(__always)
func bindBlob(_ data: Data, _ statement: OpaquePointer, _ index: Int32) -> Int32 {
    data.withUnsafeBytes { buffer in
        // A NULL pointer would bind SQL NULL: sqlite3_bind_zeroblob stores an empty blob.
        guard let base = buffer.baseAddress, buffer.count > 0 else { return sqlite3_bind_zeroblob(statement, index, 0) }
        return sqlite3_bind_blob(statement, index, base, Int32(buffer.count), sqliteTransient)
    }
}

/// Integers share one implementation through `BinaryInteger`.
public protocol IntegerColumnValue: ColumnValue, FixedWidthInteger {}

extension IntegerColumnValue {
    public static var placeholder: Self { 0 }
    @inline(__always)
    public init(sqliteColumn index: Int32, of statement: OpaquePointer) throws(ColumnDecodingFailure) {
        let value = sqlite3_column_int64(statement, index)
        guard let exact = Self(exactly: value) else {
            throw ColumnDecodingFailure("\(value) does not fit in \(Self.self)")
        }
        self = exact
    }
    @inline(__always)
    public func sqliteBind(to statement: OpaquePointer, at index: Int32) throws(ColumnDecodingFailure) -> Int32 {
        guard let value = Int64(exactly: self) else {
            throw ColumnDecodingFailure("\(self) is larger than the largest SQLite integer (\(Int64.max))")
        }
        return sqlite3_bind_int64(statement, index, value)
    }
    public var sqlArgument: DatabaseValue { Int64(exactly: self).map { $0.databaseValue } ?? .null }
}

extension Int: IntegerColumnValue { public static var scalarType: Schema.ScalarType { .int } }
extension Int8: IntegerColumnValue { public static var scalarType: Schema.ScalarType { .int8 } }
extension Int16: IntegerColumnValue { public static var scalarType: Schema.ScalarType { .int16 } }
extension Int32: IntegerColumnValue { public static var scalarType: Schema.ScalarType { .int32 } }
extension Int64: IntegerColumnValue { public static var scalarType: Schema.ScalarType { .int64 } }
extension UInt: IntegerColumnValue { public static var scalarType: Schema.ScalarType { .uint } }
extension UInt8: IntegerColumnValue { public static var scalarType: Schema.ScalarType { .uint8 } }
extension UInt16: IntegerColumnValue { public static var scalarType: Schema.ScalarType { .uint16 } }
extension UInt32: IntegerColumnValue { public static var scalarType: Schema.ScalarType { .uint32 } }
extension UInt64: IntegerColumnValue { public static var scalarType: Schema.ScalarType { .uint64 } }

extension Bool: ColumnValue {
    public var sqlArgument: DatabaseValue { databaseValue }
    public static var scalarType: Schema.ScalarType { .bool }
    public static var placeholder: Bool { false }
    public init(sqliteColumn index: Int32, of statement: OpaquePointer) throws(ColumnDecodingFailure) {
        self = sqlite3_column_int64(statement, index) != 0
    }
    public func sqliteBind(to statement: OpaquePointer, at index: Int32) throws(ColumnDecodingFailure) -> Int32 {
        sqlite3_bind_int64(statement, index, self ? 1 : 0)
    }
}

extension Double: ColumnValue {
    public var sqlArgument: DatabaseValue { databaseValue }
    public static var scalarType: Schema.ScalarType { .double }
    public static var placeholder: Double { 0 }
    public init(sqliteColumn index: Int32, of statement: OpaquePointer) throws(ColumnDecodingFailure) {
        self = sqlite3_column_double(statement, index)
    }
    public func sqliteBind(to statement: OpaquePointer, at index: Int32) throws(ColumnDecodingFailure) -> Int32 {
        sqlite3_bind_double(statement, index, self)
    }
}

extension Float: ColumnValue {
    public var sqlArgument: DatabaseValue { databaseValue }
    public static var scalarType: Schema.ScalarType { .float }
    public static var placeholder: Float { 0 }
    public init(sqliteColumn index: Int32, of statement: OpaquePointer) throws(ColumnDecodingFailure) {
        self = Float(sqlite3_column_double(statement, index))
    }
    public func sqliteBind(to statement: OpaquePointer, at index: Int32) throws(ColumnDecodingFailure) -> Int32 {
        sqlite3_bind_double(statement, index, Double(self))
    }
}

extension String: ColumnValue {
    public var sqlArgument: DatabaseValue { databaseValue }
    public static var scalarType: Schema.ScalarType { .string }
    public static var placeholder: String { "" }
    public init(sqliteColumn index: Int32, of statement: OpaquePointer) throws(ColumnDecodingFailure) {
        self = readText(statement, index)
    }
    public func sqliteBind(to statement: OpaquePointer, at index: Int32) throws(ColumnDecodingFailure) -> Int32 {
        bindText(self, statement, index)
    }
}

extension Date: ColumnValue {
    public static var scalarType: Schema.ScalarType { .date }
    public static var placeholder: Date { Date(timeIntervalSince1970: 0) }
    public init(sqliteColumn index: Int32, of statement: OpaquePointer) throws(ColumnDecodingFailure) {
        self = Date(timeIntervalSince1970: sqlite3_column_double(statement, index))
    }
    public func sqliteBind(to statement: OpaquePointer, at index: Int32) throws(ColumnDecodingFailure) -> Int32 {
        sqlite3_bind_double(statement, index, timeIntervalSince1970)
    }
    public var sqlArgument: DatabaseValue { timeIntervalSince1970.databaseValue }
}

extension UUID: ColumnValue {
    public static var scalarType: Schema.ScalarType { .uuid }
    public static var placeholder: UUID { UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) }
    public init(sqliteColumn index: Int32, of statement: OpaquePointer) throws(ColumnDecodingFailure) {
        guard let uuid = UUIDText.column(index, of: statement) else { throw ColumnDecodingFailure("'\(readText(statement, index))' is not a UUID") }
        self = uuid
    }
    public func sqliteBind(to statement: OpaquePointer, at index: Int32) throws(ColumnDecodingFailure) -> Int32 {
        UUIDText.withText(self) { sqlite3_bind_text(statement, index, $0, 36, sqliteTransient) }
    }
    public var sqlArgument: DatabaseValue { UUIDText.string(self).databaseValue }
}

extension Data: ColumnValue {
    public var sqlArgument: DatabaseValue { databaseValue }
    public static var scalarType: Schema.ScalarType { .data }
    public static var placeholder: Data { Data() }
    public init(sqliteColumn index: Int32, of statement: OpaquePointer) throws(ColumnDecodingFailure) {
        let count = Int(sqlite3_column_bytes(statement, index))
        guard count > 0, let blob = sqlite3_column_blob(statement, index) else { self = Data(); return }
        self = Data(bytes: blob, count: count)
    }
    public func sqliteBind(to statement: OpaquePointer, at index: Int32) throws(ColumnDecodingFailure) -> Int32 {
        bindBlob(self, statement, index)
    }
}

extension URL: ColumnValue {
    public static var scalarType: Schema.ScalarType { .url }
    public static var placeholder: URL { URL(string: "about:blank")! }
    public init(sqliteColumn index: Int32, of statement: OpaquePointer) throws(ColumnDecodingFailure) {
        let text = readText(statement, index)
        guard let url = URL(string: text) else { throw ColumnDecodingFailure("'\(text)' is not a URL") }
        self = url
    }
    public func sqliteBind(to statement: OpaquePointer, at index: Int32) throws(ColumnDecodingFailure) -> Int32 {
        bindText(absoluteString, statement, index)
    }
    public var sqlArgument: DatabaseValue { absoluteString.databaseValue }
}

extension Decimal: ColumnValue {
    public static var scalarType: Schema.ScalarType { .decimal }
    public static var placeholder: Decimal { 0 }
    public init(sqliteColumn index: Int32, of statement: OpaquePointer) throws(ColumnDecodingFailure) {
        let text = readText(statement, index)
        guard let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
            throw ColumnDecodingFailure("'\(text)' is not a decimal number")
        }
        self = value
    }
    public func sqliteBind(to statement: OpaquePointer, at index: Int32) throws(ColumnDecodingFailure) -> Int32 {
        bindText(description, statement, index)
    }
    public var sqlArgument: DatabaseValue { description.databaseValue }
}

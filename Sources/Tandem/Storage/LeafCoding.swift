internal import GRDBSQLite

/// Converts one non-composite value (scalar, enum, collection, JSON) to and from a column,
/// when its static type is not known to the caller (composite fields, migration defaults,
/// predicate arguments).
enum LeafCoding {
    /// The column value of `value`, stored as `type`.
    static func databaseValue(of value: Any, as type: Schema.AttributeType, coders: CoderCache) throws -> DatabaseValue {
        if let optional = value as? any OptionalValue {
            guard let wrapped = optional.wrappedValue else { return .null }
            return try databaseValue(of: wrapped, as: type, coders: coders)
        }
        switch type {
        case .scalar:
            guard let scalar = value as? any ColumnValue else { break }
            return scalar.sqlArgument
        case .enumeration:
            guard let raw = (value as? any RawRepresentable)?.rawValue as? any ColumnValue else { break }
            return raw.sqlArgument
        case .collection, .json:
            guard let encodable = value as? any Encodable else { break }
            return try coders.jsonText(encodable).databaseValue
        case .composite:
            break
        }
        throw ColumnDecodingFailure("\(Swift.type(of: value)) cannot be stored as \(type.summary)")
    }

    /// Reads a `T` stored as `type` from column `column`; the column is not NULL.
    static func read<T: Decodable>(
        _: T.Type, as type: Schema.AttributeType, column: Int32,
        statement: OpaquePointer, coders: CoderCache
    ) throws -> T {
        // Dates are the common leaf that is not a JSON scalar: read without the conformance
        // lookup and the cast below.
        if T.self == Date.self {
            return unsafeBitCast(try Date(sqliteColumn: column, of: statement), to: T.self)
        }
        if let scalar = T.self as? any ColumnValue.Type {
            return try scalar.init(sqliteColumn: column, of: statement) as! T
        }
        if let optional = T.self as? any DecodableOptional.Type {
            return try optional.readWrapped(as: type, column: column, statement: statement, coders: coders) as! T
        }
        switch type {
        case .enumeration:
            if let raw = T.self as? any (RawRepresentable & Decodable).Type {
                return try readRaw(raw, column: column, statement: statement) as! T
            }
        case .collection, .json:
            let text = readText(statement, column)
            return try coders.decoder.decode(T.self, from: Data(text.utf8))
        default:
            break
        }
        throw ColumnDecodingFailure("a \(type.summary) column cannot be read as \(T.self)")
    }

    static func readRaw<E: RawRepresentable>(_: E.Type, column: Int32, statement: OpaquePointer) throws -> E {
        guard let rawType = E.RawValue.self as? any ColumnValue.Type,
            let raw = try rawType.init(sqliteColumn: column, of: statement) as? E.RawValue
        else {
            throw ColumnDecodingFailure("\(E.self)'s raw type \(E.RawValue.self) is not storable")
        }
        guard let value = E(rawValue: raw) else {
            throw ColumnDecodingFailure("\(E.self) has no case with raw value \(raw)")
        }
        return value
    }
}

/// An `Optional` seen through an existential, to tell `nil` apart.
protocol OptionalValue {
    var wrappedValue: Any? { get }
}

extension Optional: OptionalValue {
    var wrappedValue: Any? { map { $0 as Any } }
}

/// An `Optional` whose wrapped type can be read from a (non-NULL) column.
protocol DecodableOptional {
    static func readWrapped(as type: Schema.AttributeType, column: Int32, statement: OpaquePointer, coders: CoderCache) throws -> Any
}

extension Optional: DecodableOptional where Wrapped: Decodable {
    static func readWrapped(as type: Schema.AttributeType, column: Int32, statement: OpaquePointer, coders: CoderCache) throws -> Any {
        Wrapped?.some(try LeafCoding.read(Wrapped.self, as: type, column: column, statement: statement, coders: coders)) as Any
    }
}

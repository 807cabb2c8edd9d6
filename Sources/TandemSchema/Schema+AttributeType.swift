extension Schema {
    /// The storage shape of an attribute or of a composite's field.
    public indirect enum AttributeType: Sendable, Hashable {
        /// A single SQLite value: numbers, strings, dates, UUIDs, data, URLs, decimals.
        case scalar(ScalarType)
        /// A Codable struct stored as one column per leaf field, queryable.
        case composite(Composite)
        /// An enum with a raw value, stored by raw value, queryable by case.
        case enumeration(Enumeration)
        /// An Array / Set / Dictionary of Codable values, stored as one JSON column.
        ///
        /// `element` is how one element (a dictionary's value) is shaped, for the
        /// compatibility checker; the storage depends on `typeName` alone.
        case collection(typeName: String, element: AttributeType? = nil)
        /// Any other Codable value (an enum with payloads or without raw values), stored as JSON.
        ///
        /// `shape` is the declaration's coded form when it is known from Swift sources
        /// (`tandem schema extract` writes it for enums without raw values, e.g.
        /// `"cases: done, snoozed(until: Date)"`); a running app cannot see it, so it is `nil` in
        /// the schema a store records. The checker compares shapes when both sides have one.
        case json(typeName: String, shape: String? = nil)

        /// The type without the details that do not change storage (a collection's element,
        /// a JSON type's shape): what a store compares to decide whether a column still fits.
        public var storageIdentity: AttributeType {
            switch self {
            case .scalar, .enumeration: return self
            case .composite(var composite):
                composite.fields = composite.fields.map { field in
                    var field = field
                    field.type = field.type.storageIdentity
                    return field
                }
                return .composite(composite)
            case .collection(let typeName, _): return .collection(typeName: typeName)
            case .json(let typeName, _): return .json(typeName: typeName)
            }
        }

        /// The SQLite type of the single column that holds a non-composite value.
        public var sqlType: SQLType {
            switch self {
            case .scalar(let scalar): scalar.sqlType
            case .enumeration(let enumeration): enumeration.rawType.sqlType
            case .collection, .json, .composite: .text
            }
        }
    }

    /// A Codable struct stored in columns, one per leaf.
    public struct Composite: Sendable, Hashable, Codable {
        /// The Swift type's name, e.g. `People`.
        public var typeName: String
        /// Its stored fields, in coding order.
        public var fields: [Field]

        public init(typeName: String, fields: [Field]) {
            self.typeName = typeName
            self.fields = fields
        }

        /// Leaf columns under `prefix`; every column is nullable when `nullable` is true.
        func leafColumns(prefix: [String], nullable: Bool) -> [Column] {
            fields.flatMap { field -> [Column] in
                let path = prefix + [field.name]
                if case .composite(let nested) = field.type {
                    let presence =
                        field.isOptional
                        ? [Column(name: path.joined(separator: "."), sqlType: .integer, isNullable: true, path: path, role: .presence)]
                        : []
                    return presence + nested.leafColumns(prefix: path, nullable: nullable || field.isOptional)
                }
                return [
                    Column(
                        name: path.joined(separator: "."), sqlType: field.type.sqlType,
                        isNullable: nullable || field.isOptional, path: path, role: .value)
                ]
            }
        }
    }

    /// A field of a composite.
    public struct Field: Sendable, Hashable, Codable {
        /// The coding key of the field.
        public var name: String
        public var type: AttributeType
        public var isOptional: Bool

        public init(name: String, type: AttributeType, isOptional: Bool = false) {
            self.name = name
            self.type = type
            self.isOptional = isOptional
        }
    }

    /// An enum with a raw value.
    public struct Enumeration: Sendable, Hashable, Codable {
        /// One case: its name and raw value (as text, e.g. `"2"` or `"high"`).
        public struct Case: Sendable, Hashable, Codable {
            public var name: String
            public var rawValue: String
            public init(name: String, rawValue: String) {
                self.name = name
                self.rawValue = rawValue
            }
        }

        public var typeName: String
        public var rawType: ScalarType
        /// The cases: every declared one in a schema extracted from Swift sources; at runtime
        /// only when the type is `CaseIterable`, else `nil` (unknown: the server learns them
        /// from `tandem schema publish`, see ``Schema/isVersion(of:)``).
        public var cases: [Case]?

        public init(typeName: String, rawType: ScalarType, cases: [Case]?) {
            self.typeName = typeName
            self.rawType = rawType
            self.cases = cases
        }
    }

    /// The scalar Swift types Tandem stores in one column.
    public enum ScalarType: String, Sendable, Hashable, Codable, CaseIterable {
        case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64
        case bool, double, float, string, date, uuid, data, url, decimal

        /// The column type: integers and Bool → INTEGER; Double, Float, Date → REAL;
        /// String, URL, UUID, Decimal → TEXT; Data → BLOB.
        public var sqlType: SQLType {
            switch self {
            case .int, .int8, .int16, .int32, .int64, .uint, .uint8, .uint16, .uint32, .uint64, .bool: .integer
            case .double, .float, .date: .real
            case .string, .url, .uuid, .decimal: .text
            case .data: .blob
            }
        }
    }

    /// A SQLite column type.
    public enum SQLType: String, Sendable, Hashable, Codable {
        case integer = "INTEGER", real = "REAL", text = "TEXT", blob = "BLOB"
    }
}

internal import GRDBSQLite

/// Everything the store needs to move one model type in and out of its table, computed once
/// per container: the schema entity, column positions, prepared SQL.
final class EntityMapping: Sendable {
    let modelType: any PersistentModel.Type
    let entity: Schema.Entity
    let properties: [PropertyMetadata]
    /// Columns in table order; column 0 is `#id`.
    let columns: [Schema.Column]
    /// The statement column of each attribute's first column (also its INSERT parameter - 1).
    let columnStart: [Int32]
    let columnCount: [Int32]
    /// The layout of composite attributes, by attribute index.
    let composites: [Int: CompositeLayout]
    /// How ``PersistentRow`` reads each attribute when its type is not one of the fast paths.
    let readers: [AttributeReader]
    /// Each property's declared type (kept apart from `properties` so the per-row check does
    /// not copy a whole ``PropertyMetadata``).
    let valueTypes: [ObjectIdentifier]
    /// Attribute index by the model key path.
    nonisolated(unsafe) let attributeIndex: [AnyKeyPath: Int]  // key paths are immutable
    /// Each attribute key path's description, to resolve compound key paths such as
    /// `\Todo.people.age` (persisted properties are computed, so their description shows an
    /// accessor id, not a name; the id is the same in every key path through the property).
    let keyPathPrefixes: [(prefix: String, attribute: Int)]
    /// `\Model.persistentModelID` and `\Model.id`.
    nonisolated(unsafe) let identifierKeyPaths: Set<AnyKeyPath>
    let quotedTable: String
    let selectSQL: String
    let insertSQL: String

    var name: String { entity.name }

    init(_ modelType: any PersistentModel.Type) throws {
        self.modelType = modelType
        let name = modelType.entityName
        guard Self.isValidEntityName(name) else {
            throw StoreError(.invalidModel, "'\(name)' cannot be an entity name: names starting with 'tandem_' (any case) are reserved for Tandem's own tables, and generic classes cannot be models", entity: name)
        }
        let properties = modelType.schemaMetadata
        var attributes: [Schema.Attribute] = []
        var seen: Set<String> = []
        for property in properties {
            guard seen.insert(property.name).inserted else {
                throw StoreError(.invalidModel, "property '\(property.name)' is listed twice in schemaMetadata", entity: name, attribute: property.name)
            }
            let resolved: ResolvedType
            switch property.resolution {
            case .success(let value): resolved = value
            case .failure(var error):
                error.entity = name
                error.attribute = property.name
                throw error
            }
            attributes.append(Schema.Attribute(name: property.name, type: resolved.type, isOptional: resolved.isOptional,
                                               options: property.options, originalName: property.originalName,
                                               defaultValue: property.defaultValue))
        }
        self.properties = properties
        self.entity = Schema.Entity(name: name, attributes: attributes)
        self.columns = entity.columns
        var start: [Int32] = []
        var count: [Int32] = []
        var composites: [Int: CompositeLayout] = [:]
        var next: Int32 = 1
        for (index, attribute) in attributes.enumerated() {
            start.append(next)
            let n = Int32(attribute.columns.count)
            count.append(n)
            if case .composite(let composite) = attribute.type {
                var offset: Int32 = 0
                composites[index] = CompositeLayout(composite, optional: attribute.isOptional, next: &offset)
            }
            next += n
        }
        self.readers = properties.map { AttributeReader($0.valueType) }
        self.valueTypes = properties.map { ObjectIdentifier($0.valueType) }
        self.columnStart = start
        self.columnCount = count
        self.composites = composites
        var byKeyPath: [AnyKeyPath: Int] = [:]
        for (index, property) in properties.enumerated() { byKeyPath[property.keyPath] = index }
        self.attributeIndex = byKeyPath
        self.keyPathPrefixes = properties.enumerated().map { ($1.keyPath.debugDescription + ".", $0) }
        self.identifierKeyPaths = Self.identifierKeyPaths(modelType)
        self.quotedTable = SQLName.quote(name)
        let columnList = columns.map { SQLName.quote($0.name) }.joined(separator: ", ")
        self.selectSQL = "SELECT \(columns.map { "t.\(SQLName.quote($0.name))" }.joined(separator: ", ")) FROM \(quotedTable) AS t"
        self.insertSQL = "INSERT INTO \(quotedTable) (\(columnList)) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))"
    }

    static func isValidEntityName(_ name: String) -> Bool {
        !name.lowercased().hasPrefix("tandem_") && !name.contains("<") && !name.isEmpty
    }

    /// The UPDATE statement for the changed attributes, and each attribute's first parameter
    /// (0 for attributes not in the statement). The `#id` is the last parameter.
    func update(for changes: ChangeSet) -> (sql: String, parameters: [Int32]) {
        var assignments: [String] = []
        var parameters = Array(repeating: Int32(0), count: entity.attributes.count)
        var next: Int32 = 1
        for index in entity.attributes.indices where changes.contains(index) {
            parameters[index] = next
            for column in 0..<Int(columnCount[index]) {
                assignments.append("\(SQLName.quote(columns[Int(columnStart[index]) + column].name)) = ?")
            }
            next += columnCount[index]
        }
        let sql = "UPDATE \(quotedTable) SET \(assignments.joined(separator: ", ")) WHERE \"#id\" = ?"
        return (sql, parameters)
    }

    /// INSERT parameters: every attribute, in column order after `#id`.
    var insertParameters: [Int32] {
        columnStart.map { $0 + 1 }
    }

    /// The attribute for a top-level key path of the model.
    func attribute(for keyPath: AnyKeyPath) -> Int? {
        attributeIndex[keyPath]
    }

    /// The attribute a key path starts with, and the composite field names after it:
    /// `\Todo.people.age` → (index of `people`, ["age"]).
    func resolve(_ keyPath: AnyKeyPath) -> (attribute: Int, fields: [String])? {
        if let index = attributeIndex[keyPath] { return (index, []) }
        let text = keyPath.debugDescription
        for (prefix, index) in keyPathPrefixes where text.hasPrefix(prefix) {
            return (index, text.dropFirst(prefix.count).split(separator: ".").map(String.init))
        }
        return nil
    }

    private static func identifierKeyPaths(_ type: any PersistentModel.Type) -> Set<AnyKeyPath> {
        func paths<T: PersistentModel>(_: T.Type) -> Set<AnyKeyPath> { [\T.persistentModelID, \T.id] }
        return paths(type)
    }
}

/// Quoting of SQL identifiers.
enum SQLName {
    static func quote(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

/// The decoding strategy of one attribute, decided once from its Swift type, so fetching does
/// no runtime type checks per row.
///
/// `@unchecked Sendable`: `none` is `Optional<Scalar>.none` for a scalar type (all of which are
/// value types with no references), stored as `Any` only because its static type varies; the
/// enumeration closures capture only metatypes.
enum AttributeReader: @unchecked Sendable {
    case string, int, double, bool, date, int64
    case optionalString, optionalInt, optionalDouble, optionalDate
    case scalar(any ColumnValue.Type)
    case optionalScalar(any ColumnValue.Type, none: Any)
    /// Reads the raw value and builds the enum (or `Optional` of it); the result is the property's type.
    case enumeration((OpaquePointer, Int32) throws -> Any)
    case other

    init(_ type: Any.Type) {
        switch ObjectIdentifier(type) {
        case ObjectIdentifier(String.self): self = .string
        case ObjectIdentifier(Int.self): self = .int
        case ObjectIdentifier(Double.self): self = .double
        case ObjectIdentifier(Bool.self): self = .bool
        case ObjectIdentifier(Date.self): self = .date
        case ObjectIdentifier(Int64.self): self = .int64
        case ObjectIdentifier(String?.self): self = .optionalString
        case ObjectIdentifier(Int?.self): self = .optionalInt
        case ObjectIdentifier(Double?.self): self = .optionalDouble
        case ObjectIdentifier(Date?.self): self = .optionalDate
        default:
            if let scalar = type as? any ColumnValue.Type {
                self = .scalar(scalar)
            } else if let optional = type as? any OptionalMarker.Type, let scalar = optional.wrappedType as? any ColumnValue.Type {
                self = .optionalScalar(scalar, none: optional.none)
            } else if let raw = type as? any (RawRepresentable & Decodable).Type, let read = Self.enumReader(raw, optional: false) {
                self = .enumeration(read)
            } else if let optional = type as? any OptionalMarker.Type,
                      let raw = optional.wrappedType as? any (RawRepresentable & Decodable).Type,
                      let read = Self.enumReader(raw, optional: true) {
                self = .enumeration(read)
            } else {
                self = .other
            }
        }
    }

    private static func enumReader<E: RawRepresentable>(_: E.Type, optional: Bool) -> ((OpaquePointer, Int32) throws -> Any)? {
        guard let rawType = E.RawValue.self as? any ColumnValue.Type else { return nil }
        return { statement, column in
            if sqlite3_column_type(statement, column) == SQLITE_NULL {
                guard optional else { throw ColumnDecodingFailure("NULL in a non-optional \(E.self) attribute") }
                return E?.none as Any
            }
            guard let raw = try rawType.init(sqliteColumn: column, of: statement) as? E.RawValue else {
                throw ColumnDecodingFailure("\(E.self)'s raw type is not storable")
            }
            guard let value = E(rawValue: raw) else { throw ColumnDecodingFailure("\(E.self) has no case with raw value \(raw)") }
            return optional ? (E?.some(value) as Any) : value
        }
    }
}

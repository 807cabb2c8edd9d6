internal import GRDBSQLite

/// What a persisted property is in storage.
enum PropertyKind: Sendable, Equatable {
    /// An attribute: its index in ``Schema/Entity/attributes``.
    case attribute(Int)
    /// A relationship: its index in ``Schema/Entity/relationships``.
    case relationship(Int)
}

/// Everything the store needs to move one model type in and out of its table, computed once
/// per container: the schema entity, column positions, prepared SQL.
///
/// Arrays named per property are indexed by the property's position in
/// ``PersistentModel/schemaMetadata`` — the index `@Model` passes to `decode(at:)`,
/// `encode(_:at:)` and the change tracking.
final class EntityMapping: Sendable {
    let modelType: any PersistentModel.Type
    let entity: Schema.Entity
    let properties: [PropertyMetadata]
    let kinds: [PropertyKind]
    /// Columns in table order; column 0 is `#id`.
    let columns: [Schema.Column]
    /// Per property: the statement column of its first column (also its INSERT parameter - 1);
    /// 0 for to-many relationships, which have no column.
    let columnStart: [Int32]
    let columnCount: [Int32]
    /// The layout of composite attributes, by property index.
    let composites: [Int: CompositeLayout]
    /// How ``PersistentRow`` reads each property when its type is not one of the fast paths.
    let readers: [AttributeReader]
    /// Each property's declared type (kept apart from `properties` so the per-row check does
    /// not copy a whole ``PropertyMetadata``).
    let valueTypes: [ObjectIdentifier]
    /// Property index by the model key path.
    nonisolated(unsafe) let attributeIndex: [AnyKeyPath: Int]  // key paths are immutable
    /// Each property key path's description, to resolve compound key paths such as
    /// `\Todo.people.age` (persisted properties are computed, so their description shows an
    /// accessor id, not a name; the id is the same in every key path through the property).
    let keyPathPrefixes: [(prefix: String, attribute: Int)]
    /// Property index by the component a key path prints for it (`<computed 0x… (String)>`
    /// or `name`), to follow compound key paths across a to-one relationship.
    let componentIndex: [String: Int]
    /// `\Model.persistentModelID` and `\Model.id`.
    nonisolated(unsafe) let identifierKeyPaths: Set<AnyKeyPath>
    let quotedTable: String
    let selectSQL: String
    let insertSQL: String

    var name: String { entity.name }

    /// To-one relationship properties and their foreign-key column (a fetch reads them).
    let foreignKeyProperties: [(property: Int, column: Int32)]

    /// The attribute a property stores, or `nil` for a relationship.
    @inline(__always)
    func attribute(ofProperty index: Int) -> Schema.Attribute? {
        if case .attribute(let i) = kinds[index] { return entity.attributes[i] }
        return nil
    }

    /// The relationship a property stores, or `nil` for an attribute.
    func relationship(ofProperty index: Int) -> Schema.Relationship? {
        if case .relationship(let i) = kinds[index] { return entity.relationships[i] }
        return nil
    }

    /// The property index of the relationship named `name`.
    func propertyIndex(named name: String) -> Int? {
        properties.firstIndex { $0.name == name }
    }

    /// Validates a model type and describes its attributes (relationships come from
    /// ``RelationshipResolver``, which needs every model of the container).
    static func checkedProperties(_ modelType: any PersistentModel.Type) throws -> [PropertyMetadata] {
        let name = modelType.entityName
        // A renamed model: its class name is declared (the metadata, the handshake), its
        // first name stored; both must be usable.
        for candidate in [String(describing: modelType), name] where !isValidEntityName(candidate) {
            throw StoreError(
                .invalidModel, "'\(candidate)' cannot be an entity name: names starting with 'tandem_' (any case) are reserved for Tandem's own tables, and generic classes cannot be models",
                entity: name)
        }
        let properties = modelType.schemaMetadata
        var seen: Set<String> = []
        for property in properties {
            guard seen.insert(property.name).inserted else {
                throw StoreError(.invalidModel, "property '\(property.name)' is listed twice in schemaMetadata", entity: name, attribute: property.name)
            }
            if case .failure(var error) = property.resolution {
                error.entity = name
                error.attribute = property.name
                throw error
            }
        }
        return properties
    }

    /// - Parameter properties: `modelType`'s ``checkedProperties(_:)``.
    init(_ modelType: any PersistentModel.Type, properties: [PropertyMetadata], relationships: [Schema.Relationship]) {
        self.modelType = modelType
        let name = modelType.entityName
        var attributes: [Schema.Attribute] = []
        var kinds: [PropertyKind] = []
        for property in properties {
            if property.relationship != nil {
                kinds.append(.relationship(kinds.filter { if case .relationship = $0 { true } else { false } }.count))
                continue
            }
            guard case .success(let resolved) = property.resolution else { continue }
            kinds.append(.attribute(attributes.count))
            attributes.append(
                Schema.Attribute(
                    name: property.name, type: resolved.type, isOptional: resolved.isOptional,
                    options: property.options, originalName: property.originalName,
                    defaultValue: property.defaultValue))
        }
        self.properties = properties
        self.kinds = kinds
        self.entity = Schema.Entity(name: name, attributes: attributes, relationships: relationships)
        self.columns = entity.columns
        var start = Array(repeating: Int32(0), count: properties.count)
        var count = Array(repeating: Int32(0), count: properties.count)
        var composites: [Int: CompositeLayout] = [:]
        var next: Int32 = 1
        for (index, kind) in kinds.enumerated() {
            guard case .attribute(let a) = kind else { continue }
            let attribute = attributes[a]
            start[index] = next
            count[index] = Int32(attribute.columns.count)
            if case .composite(let composite) = attribute.type {
                var offset: Int32 = 0
                composites[index] = CompositeLayout(composite, optional: attribute.isOptional, next: &offset)
            }
            next += count[index]
        }
        for (index, kind) in kinds.enumerated() {
            guard case .relationship(let r) = kind, !relationships[r].isToMany else { continue }
            start[index] = next
            count[index] = 1
            next += 1
        }
        self.foreignKeyProperties = kinds.indices.compactMap { index in
            if case .relationship(let r) = kinds[index], !relationships[r].isToMany { return (index, start[index]) }
            return nil
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
        var components: [String: Int] = [:]
        for (index, property) in properties.enumerated() {
            let text = property.keyPath.debugDescription
            if let dot = text.firstIndex(of: ".") { components[String(text[text.index(after: dot)...])] = index }
        }
        self.componentIndex = components
        self.identifierKeyPaths = Self.identifierKeyPaths(modelType)
        self.quotedTable = SQLName.quote(name)
        let columnList = columns.map { SQLName.quote($0.name) }.joined(separator: ", ")
        self.selectSQL = "SELECT \(columns.map { "t.\(SQLName.quote($0.name))" }.joined(separator: ", ")) FROM \(quotedTable) AS t"
        // The journal's stamp column is the last parameter, bound to the transaction's stamps
        // by the save (else the insert trigger would update the row again). No SQL function
        // in the statement itself: SQLite then keeps a statement journal per row.
        self.insertSQL = "INSERT INTO \(quotedTable) (\(columnList), \(SQLName.quote(JournalDDL.stampColumn))) VALUES (\(Array(repeating: "?", count: columns.count + 1).joined(separator: ", ")))"
    }

    static func isValidEntityName(_ name: String) -> Bool {
        !name.lowercased().hasPrefix("tandem_") && !name.contains("<") && !name.isEmpty
    }

    /// The UPDATE statement for the changed attributes, and each attribute's first parameter
    /// (0 for attributes not in the statement). The `#id` is the last parameter.
    func update(for changes: ChangeSet) -> (sql: String, parameters: [Int32]) {
        var assignments: [String] = []
        var parameters = Array(repeating: Int32(0), count: properties.count)
        var next: Int32 = 1
        for index in properties.indices where changes.contains(index) && columnCount[index] > 0 {
            parameters[index] = next
            for column in 0..<Int(columnCount[index]) {
                assignments.append("\(SQLName.quote(columns[Int(columnStart[index]) + column].name)) = ?")
            }
            next += columnCount[index]
        }
        let sql = "UPDATE \(quotedTable) SET \(assignments.joined(separator: ", ")) WHERE \"#id\" = ?"
        return (sql, parameters)
    }

    /// INSERT parameters: every property with a column, in column order after `#id`.
    var insertParameters: [Int32] {
        zip(columnStart, columnCount).map { $1 > 0 ? $0 + 1 : 0 }
    }

    /// The attribute for a top-level key path of the model.
    func attribute(for keyPath: AnyKeyPath) -> Int? {
        attributeIndex[keyPath]
    }

    /// The attribute a key path starts with, and the composite field names after it:
    /// `\Todo.people.age` → (index of `people`, ["age"]).
    func resolve(_ keyPath: AnyKeyPath) -> (attribute: Int, fields: [String])? {
        if let index = attributeIndex[keyPath] { return (index, []) }
        // Optional chaining prints as `?` after a component; type names print as Optional<…>.
        let text = keyPath.debugDescription.replacingOccurrences(of: "?", with: "").replacingOccurrences(of: "!", with: "")
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

/// Quoting of SQL identifiers (entity and column names), for SQL written by hand against a
/// store: the CLI and the sync engine use it too.
///
/// ```swift
/// let sql = "SELECT \(SQLName.quote("people.age")) FROM \(SQLName.quote("Todo"))"   // "people.age", "Todo"
/// ```
public enum SQLName {
    public static func quote(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

/// The decoding strategy of one attribute, decided once from its Swift type, so fetching does
/// no runtime type checks per row.
///
enum AttributeReader: Sendable {
    case string, int, double, bool, date, int64
    case optionalString, optionalInt, optionalDouble, optionalDate
    /// Another scalar or an enum with a storable raw value, or an `Optional` of either.
    case column(any ColumnReading)
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
                self = .column(Self.scalarReader(scalar, optional: false))
            } else if let optional = type as? any OptionalMarker.Type, let scalar = optional.wrappedType as? any ColumnValue.Type {
                self = .column(Self.scalarReader(scalar, optional: true))
            } else if let raw = type as? any (RawRepresentable & Decodable).Type, let read = Self.enumReader(raw, optional: false) {
                self = .column(read)
            } else if let optional = type as? any OptionalMarker.Type,
                let raw = optional.wrappedType as? any (RawRepresentable & Decodable).Type,
                let read = Self.enumReader(raw, optional: true)
            {
                self = .column(read)
            } else {
                self = .other
            }
        }
    }

    private static func scalarReader<S: ColumnValue>(_: S.Type, optional: Bool) -> any ColumnReading {
        ScalarColumnReader<S>(optional: optional)
    }

    /// A reader of `E` through its raw type, when that type is storable.
    private static func enumReader<E: RawRepresentable>(_: E.Type, optional: Bool) -> (any ColumnReading)? {
        guard let rawType = E.RawValue.self as? any ColumnValue.Type else { return nil }
        func make<R: ColumnValue>(_: R.Type) -> any ColumnReading { EnumColumnReader<E, R>(optional: optional) }
        return make(rawType)
    }
}

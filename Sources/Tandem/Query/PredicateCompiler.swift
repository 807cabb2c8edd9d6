/// Compiles a `#Predicate` and sort descriptors into SQL for one entity.
///
/// ```swift
/// var compiler = PredicateCompiler(mapping: mapping)
/// let condition = try compiler.compile(predicate)   // t."people.age" >= ? AND t."priority" = ?
/// ```
///
/// Supported: comparisons, `&&` `||` `!`, arithmetic, optionals (`== nil`, `??`, optional
/// chaining), string `contains` / `starts(with:)` / `localizedStandardContains`,
/// `collection.contains(value)` (IN), key paths into composites, enum cases (by raw value),
/// `contains` / `contains(where:)` / `allSatisfy` / `isEmpty` / `count` on JSON collections,
/// dates, captured values, `persistentModelID == id`. Anything else throws
/// ``StoreError/Code/unsupportedPredicate`` naming the construct.
struct PredicateCompiler {
    let mapping: EntityMapping
    /// Every entity of the container, for relationships.
    let mappings: [String: EntityMapping]
    let schema: Schema
    /// What each predicate variable stands for.
    var variables: [PredicateExpressions.VariableID: SQLExpression] = [:]
    private var aliasCounter = 0

    init(mapping: EntityMapping, container: ModelContainer) {
        self.mapping = mapping
        self.mappings = container.mappingsByName
        self.schema = container.schema
    }

    func unsupported(_ what: String) -> StoreError {
        StoreError(.unsupportedPredicate, "\(what) cannot be compiled to SQL; rewrite the predicate, or use FetchDescriptor(sqlFilter:) for raw SQL", entity: mapping.name)
    }

    mutating func compile<T>(_ predicate: Predicate<T>) throws -> SQLExpression {
        variables[predicate.variable.key] = SQLExpression("t", kind: .record(alias: "t", mapping: mapping))
        return try compile(predicate.expression)
    }

    mutating func compile(_ expression: Any) throws -> SQLExpression {
        guard let compilable = expression as? any SQLCompilable else {
            throw unsupported("\(Self.constructName(expression))")
        }
        return try compilable.compile(&self)
    }

    /// A readable name for an expression type: `StringCaseInsensitiveCompare`.
    static func constructName(_ expression: Any) -> String {
        let name = String(describing: type(of: expression))
        return "the predicate construct '\(name.split(separator: "<").first.map(String.init) ?? name)'"
    }

    mutating func freshAlias() -> String {
        aliasCounter += 1
        return "j\(aliasCounter)"
    }

    /// Compiles a boolean condition, making sure a bare column reads as a boolean.
    mutating func condition(_ expression: Any) throws -> SQLExpression {
        let compiled = try compile(expression)
        if case .captured(let value) = compiled.kind {
            return try capturedValue(value)
        }
        return compiled
    }

    /// A captured value as a SQL argument.
    func capturedValue(_ value: Any) throws -> SQLExpression {
        if let optional = value as? any OptionalValue, optional.wrappedValue == nil { return .null }
        return SQLExpression("?", [try Self.databaseValue(value)])
    }

    static func databaseValue(_ value: Any) throws -> DatabaseValue {
        if let optional = value as? any OptionalValue {
            guard let wrapped = optional.wrappedValue else { return .null }
            return try databaseValue(wrapped)
        }
        if let scalar = value as? any ColumnValue { return scalar.sqlArgument }
        if let raw = (value as? any RawRepresentable)?.rawValue as? any ColumnValue { return raw.sqlArgument }
        if let id = value as? PersistentIdentifier { return UUIDText.string(id.uuid).databaseValue }
        if let model = value as? any PersistentModel { return UUIDText.string(model.uuidAssigningIfNeeded).databaseValue }
        throw StoreError(.unsupportedPredicate, "a captured value of type \(type(of: value)) cannot be compared in SQL; compare scalar fields instead")
    }

    /// For `collection.contains(x)` with a captured `x`: `[x]` as JSON text, encoded as the
    /// store encodes collections, or `nil` when `x` is not a captured value.
    func jsonElement(_ expression: Any) throws -> DatabaseValue? {
        guard let value = (expression as? any CapturedValue)?.capturedValue as? any Encodable else { return nil }
        func encodeArray<E: Encodable>(_ element: E) throws -> String { try CoderCache().jsonText([element]) }
        return try encodeArray(value).databaseValue
    }

    static func elements(of sequence: any Sequence) -> [Any] {
        func open<S: Sequence>(_ s: S) -> [Any] { s.map { $0 as Any } }
        return open(sequence)
    }

    /// Makes a value expression concrete (captured values become `?`).
    mutating func operand(_ expression: Any) throws -> SQLExpression {
        try concrete(try compile(expression))
    }

    /// A compiled operand as a SQL value: captured values become `?`.
    func concrete(_ compiled: SQLExpression) throws -> SQLExpression {
        switch compiled.kind {
        case .captured(let value): return try capturedValue(value)
        case .toOne: return SQLExpression(compiled.sql, compiled.arguments, isNullable: true, isText: true)
        case .record, .composite, .toMany: throw unsupported("comparing a whole record, composite or to-many relationship")
        default: return compiled
        }
    }

    /// The SQL for an ORDER BY clause and its arguments: attributes, composite leaves and
    /// to-one key paths (`\Article.category?.name`, a correlated subquery).
    mutating func orderBy<T>(_ sortBy: [SortDescriptor<T>]) throws -> (sql: String, arguments: [DatabaseValue])? {
        guard !sortBy.isEmpty else { return nil }
        var terms: [String] = []
        var arguments: [DatabaseValue] = []
        for descriptor in sortBy {
            guard let keyPath = descriptor.keyPath else { throw unsupported("a sort descriptor without a key path (comparator-only)") }
            if let index = mapping.attribute(for: keyPath), case .scalar(.decimal)? = mapping.attribute(ofProperty: index)?.type {
                throw unsupported("sorting by the Decimal \(mapping.properties[index].name) (stored as exact text, which does not order numerically)")
            }
            let expression = try concrete(try member(of: SQLExpression("t", kind: .record(alias: "t", mapping: mapping)), keyPath: keyPath))
            terms.append("\(expression.sql) \(descriptor.order == .forward ? "ASC" : "DESC")")
            arguments += expression.arguments
        }
        return (terms.joined(separator: ", "), arguments)
    }

    /// The column a model key path (`\Todo.title`, `\Todo.people.age`) reads.
    func columnName(for keyPath: AnyKeyPath) throws -> String {
        if mapping.identifierKeyPaths.contains(keyPath) { return "#id" }
        guard let (index, fields) = mapping.resolve(keyPath) else {
            throw unsupported("the key path \(keyPath) (not a stored attribute of \(mapping.name))")
        }
        if fields.isEmpty, mapping.columnCount[index] == 1 {
            return mapping.columns[Int(mapping.columnStart[index])].name
        }
        let joined = ([mapping.properties[index].name] + fields).joined(separator: ".")
        let range = Int(mapping.columnStart[index])..<Int(mapping.columnStart[index] + mapping.columnCount[index])
        guard let column = mapping.columns[range].first(where: { $0.name == joined && $0.role == .value }) else {
            throw unsupported("the key path \(keyPath) (it does not name a single stored column; sort by a leaf of the composite)")
        }
        return column.name
    }

    /// `\Todo.people.age` → ["people", "age"], from the key path's description.
    static func components(_ keyPath: AnyKeyPath) -> [String] {
        let text = keyPath.debugDescription
        guard let firstDot = text.firstIndex(of: ".") else { return [] }
        return text[text.index(after: firstDot)...].split(separator: ".").map { component in
            String(component).replacingOccurrences(of: "?", with: "").replacingOccurrences(of: "!", with: "")
        }
    }
}

/// A `PredicateExpressions.Value`, seen through an existential.
protocol CapturedValue {
    var capturedValue: Any { get }
}

extension PredicateExpressions.Value: CapturedValue {
    var capturedValue: Any { value }
}

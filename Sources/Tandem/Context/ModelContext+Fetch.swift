internal import GRDBSQLite

extension ModelContext {
    /// The objects matching `descriptor`, filtered, sorted and paged in SQLite.
    ///
    /// Records this context already holds come back as the same instances; unchanged ones are
    /// refreshed with the stored values (so saves from another context show up). With
    /// ``FetchDescriptor/includePendingChanges`` (the default), unsaved inserts and changes
    /// of this context are matched in memory and deleted objects are left out.
    ///
    /// - Throws: ``StoreError/Code/unsupportedPredicate`` for a predicate or sort that cannot
    ///   run in SQL, ``StoreError/Code/invalidValue`` for a stored value that does not decode.
    public func fetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> [T] {
        let mapping = try container.mapping(for: T.self)
        let query = try Query(descriptor, mapping: mapping, container: container)
        let pending = pendingObjects(of: T.self)
        guard descriptor.includePendingChanges, !pending.isEmpty else {
            let results: [T] = try fetchRows(mapping, sql: query.sql(limit: descriptor.fetchLimit, offset: descriptor.fetchOffset), arguments: query.arguments, skipping: [])
            try prefetch(descriptor.relationshipKeyPathsForPrefetching, for: results, mapping: mapping)
            return results
        }
        // Unsaved work: fetch the stored matches, then merge the pending objects in memory.
        var skipped = Set(deleted.values.compactMap { ($0 as? T)?.persistentState.uuid })
        let changedOfType = changed.values.compactMap { $0 as? T }
        // Changed objects are matched in memory instead, unless a raw SQL filter (which
        // cannot run in memory) decides: then their stored rows stand.
        if descriptor.sqlFilter == nil {
            for model in changedOfType { skipped.insert(model.persistentState.uuid) }
        }
        var results: [T] = try fetchRows(mapping, sql: query.sql(limit: nil, offset: nil), arguments: query.arguments, skipping: skipped)
        if descriptor.sqlFilter == nil {
            for model in changedOfType + insertionOrder.compactMap({ inserted[$0] as? T })
            where try descriptor.predicate?.evaluate(model) ?? true {
                results.append(model)
            }
            if !descriptor.sortBy.isEmpty { results.sort { SQLOrdering.areInIncreasingOrder($0, $1, by: descriptor.sortBy) } }
        }
        let start = min(descriptor.fetchOffset ?? 0, results.count)
        let end = descriptor.fetchLimit.map { min(start + $0, results.count) } ?? results.count
        let page = Array(results[start..<end])
        try prefetch(descriptor.relationshipKeyPathsForPrefetching, for: page, mapping: mapping)
        return page
    }

    /// The number of objects matching `descriptor`, counted in SQLite.
    public func fetchCount<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> Int {
        let mapping = try container.mapping(for: T.self)
        if descriptor.includePendingChanges, !pendingObjects(of: T.self).isEmpty {
            return try fetch(descriptor).count
        }
        let query = try Query(descriptor, mapping: mapping, container: container)
        let sql = "SELECT COUNT(*) FROM (\(query.sql(limit: descriptor.fetchLimit, offset: descriptor.fetchOffset, columns: "1")))"
        return try StoreErrorMapping.map(mapping: mapping) {
            try container.writer.read { db in try Int.fetchOne(db, sql: sql, arguments: StatementArguments(query.arguments)) ?? 0 }
        }
    }

    /// Counts the matching objects per value of `keyPath`, with `GROUP BY` in SQLite.
    ///
    /// ```swift
    /// let byYear: [Int: Int] = try context.fetchCount(FetchDescriptor<Student>(), groupedBy: \.birthOfYear)
    /// ```
    public func fetchCount<T: PersistentModel, Key: Hashable & Decodable>(_ descriptor: FetchDescriptor<T>, groupedBy keyPath: KeyPath<T, Key>) throws -> [Key: Int] {
        let mapping = try container.mapping(for: T.self)
        if descriptor.includePendingChanges, !pendingObjects(of: T.self).isEmpty {
            return Dictionary(grouping: try fetch(descriptor), by: { $0[keyPath: keyPath] }).mapValues(\.count)
        }
        let column = try PredicateCompiler(mapping: mapping, container: container).columnName(for: keyPath)
        guard let columnIndex = mapping.columns.firstIndex(where: { $0.name == column }) else {
            throw StoreError(.unsupportedPredicate, "cannot group by \(keyPath)", entity: mapping.name)
        }
        let type = Self.columnType(mapping, columnIndex)
        let query = try Query(descriptor, mapping: mapping, container: container)
        let quoted = "t.\(SQLName.quote(column))"
        let sql = "SELECT \(quoted), COUNT(*) FROM \(mapping.quotedTable) AS t\(query.whereClause) GROUP BY \(quoted)"
        return try StoreErrorMapping.map(mapping: mapping) {
            try container.writer.read { db in
                let statement = try db.makeStatement(sql: sql)
                try statement.setArguments(StatementArguments(query.whereArguments))
                let sqlite = statement.sqliteStatement
                let coders = CoderCache()
                var counts: [Key: Int] = [:]
                while true {
                    let code = sqlite3_step(sqlite)
                    if code == SQLITE_DONE { break }
                    guard code == SQLITE_ROW else { throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection))) }
                    let key: Key
                    if sqlite3_column_type(sqlite, 0) == SQLITE_NULL {
                        guard let none = (Key.self as? any OptionalMarker.Type)?.none as? Key else { continue }
                        key = none
                    } else {
                        key = try LeafCoding.read(Key.self, as: type, column: 0, statement: sqlite, coders: coders)
                    }
                    counts[key, default: 0] += Int(sqlite3_column_int64(sqlite, 1))
                }
                return counts
            }
        }
    }

    private static func columnType(_ mapping: EntityMapping, _ column: Int) -> Schema.AttributeType {
        let path = mapping.columns[column].path
        guard let attribute = mapping.entity.attribute(named: path.first ?? "") else { return .scalar(.string) }
        var type = attribute.type
        for name in path.dropFirst() {
            guard case .composite(let composite) = type, let field = composite.fields.first(where: { $0.name == name }) else { break }
            type = field.type
        }
        return type
    }

    /// Unsaved objects of type `T` (inserted, changed or deleted).
    func pendingObjects<T: PersistentModel>(of type: T.Type) -> [any PersistentModel] {
        guard hasChanges else { return [] }
        return (inserted.values.filter { $0 is T }) + changed.values.filter { $0 is T } + deleted.values.filter { $0 is T }
    }

    /// Runs a SELECT of the entity's columns and turns rows into registered objects.
    func fetchRows<T: PersistentModel>(_ mapping: EntityMapping, sql: String, arguments: [DatabaseValue], skipping: Set<UUID>) throws -> [T] {
        try StoreErrorMapping.map(mapping: mapping) {
            try container.writer.read { db in
                let statement = try db.makeStatement(sql: sql)
                if !arguments.isEmpty { try statement.setArguments(StatementArguments(arguments)) }
                return try materialize(statement: statement, db: db, mapping: mapping, skipping: skipping)
            }
        }
    }

    private func materialize<T: PersistentModel>(statement: Statement, db: Database, mapping: EntityMapping, skipping: Set<UUID>) throws -> [T] {
        var owners: [UUID?] = []
        return try materializeWithOwners(statement: statement, db: db, mapping: mapping, skipping: skipping, ownerColumn: nil, owners: &owners)
    }

    /// Turns rows into registered objects; with `ownerColumn`, also reads the UUID in that
    /// column (the owner of a to-many relationship being loaded).
    func materializeWithOwners<T: PersistentModel>(
        statement: Statement, db: Database, mapping: EntityMapping,
        skipping: Set<UUID>, ownerColumn: Int32?, owners: inout [UUID?]
    ) throws -> [T] {
        let sqlite = statement.sqliteStatement
        let row = PersistentRow(statement: sqlite, mapping: mapping, coders: CoderCache())
        let dataset = container.dataset
        var results: [T] = []
        // New objects: their UUIDs and positions in `results` (plain values, no reference
        // counting), registered in one batch at the end.
        var freshIDs: [UUID] = []
        var freshPositions: [Int] = []
        let foreignKeyColumns = mapping.foreignKeyProperties
        // A context holding nothing yet (the common case for a one-off fetch) needs no lookups.
        let lookUp = !registered.isEmpty
        defer { registerBatch(ids: freshIDs, positions: freshPositions, in: results) }
        while true {
            let code = sqlite3_step(sqlite)
            if code == SQLITE_DONE { break }
            guard code == SQLITE_ROW else {
                throw DatabaseError(
                    resultCode: ResultCode(rawValue: sqlite3_extended_errcode(db.sqliteConnection)),
                    message: String(cString: sqlite3_errmsg(db.sqliteConnection)), sql: statement.sql)
            }
            guard let uuid = UUIDText.column(0, of: sqlite) else {
                throw StoreError(.invalidValue, "a row has a malformed \"#id\" (not a UUID); the table was edited outside Tandem", entity: mapping.name)
            }
            if !skipping.isEmpty, skipping.contains(uuid) { continue }
            let owner = ownerColumn.flatMap { UUIDText.column($0, of: sqlite) }
            if lookUp, let existing = registered[uuid]?.model {
                guard let model = existing as? T else { continue }
                if model.persistentState.status == .deleted { continue }
                if model.persistentState.changes.isEmpty {
                    try model.refreshPersistentValues(from: row)
                    if !foreignKeyColumns.isEmpty { Self.readForeignKeys(into: model, foreignKeyColumns, sqlite) }
                    model.persistentState.loadedRelationships.removeAll()
                }
                results.append(model)
                if ownerColumn != nil { owners.append(owner) }
            } else {
                let model = try T(persistentRow: row)
                model.persistentState.adopt(uuid: uuid, dataset: dataset, context: self, status: .registered)
                if !foreignKeyColumns.isEmpty { Self.readForeignKeys(into: model, foreignKeyColumns, sqlite) }
                freshIDs.append(uuid)
                freshPositions.append(results.count)
                results.append(model)
                if ownerColumn != nil { owners.append(owner) }
            }
        }
        return results
    }

    /// Fetches one record by UUID, for ``model(for:)``.
    func fetchOne(_ type: any PersistentModel.Type, uuid: UUID) throws -> (any PersistentModel)? {
        try fetchOne(opened: type, uuid: uuid)
    }

    /// Records the row's foreign keys (to-one relationships load lazily from them).
    static func readForeignKeys(into model: some PersistentModel, _ columns: [(property: Int, column: Int32)], _ sqlite: OpaquePointer) {
        var keys: [Int: UUID] = [:]
        for (property, column) in columns {
            keys[property] = UUIDText.column(column, of: sqlite)
        }
        model.persistentState.foreignKeys = keys
    }

    func fetchOne<T: PersistentModel>(opened type: T.Type, uuid: UUID) throws -> T? {
        let mapping = try container.mapping(for: T.self)
        let rows: [T] = try fetchRows(mapping, sql: "\(mapping.selectSQL) WHERE t.\"#id\" = ?", arguments: [UUIDText.string(uuid).databaseValue], skipping: [])
        return rows.first
    }

    /// Reloads an object's stored values (rollback of its changes).
    func reload(_ model: any PersistentModel) throws {
        _ = try fetchOne(type(of: model), uuid: model.persistentState.uuid)
    }
}

/// A compiled fetch: WHERE clause, ORDER BY and arguments.
struct Query {
    let mapping: EntityMapping
    let whereClause: String
    let orderClause: String
    /// Arguments of the WHERE clause, then of the ORDER BY clause.
    let arguments: [DatabaseValue]
    let whereArguments: [DatabaseValue]

    init<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, mapping: EntityMapping, container: ModelContainer) throws {
        self.mapping = mapping
        var compiler = PredicateCompiler(mapping: mapping, container: container)
        var conditions: [String] = []
        var arguments: [DatabaseValue] = []
        if let predicate = descriptor.predicate {
            let condition = try compiler.compile(predicate)
            if case .captured(let value) = condition.kind {
                let constant = try compiler.capturedValue(value)
                conditions.append(constant.sql)
                arguments += constant.arguments
            } else {
                conditions.append(condition.sql)
                arguments += condition.arguments
            }
        }
        if let filter = descriptor.sqlFilter {
            conditions.append("(\(filter))")
            arguments += descriptor.sqlArguments.map { ($0 as? any ColumnValue)?.sqlArgument ?? $0.databaseValue }
        }
        self.whereClause = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        let order = try compiler.orderBy(descriptor.sortBy)
        self.orderClause = order.map { " ORDER BY \($0.sql)" } ?? ""
        self.whereArguments = arguments
        self.arguments = arguments + (order?.arguments ?? [])
    }

    func sql(limit: Int?, offset: Int?, columns: String? = nil) -> String {
        var sql = columns.map { "SELECT \($0) FROM \(mapping.quotedTable) AS t" } ?? mapping.selectSQL
        sql += whereClause + orderClause
        if let limit { sql += " LIMIT \(max(0, limit))" }
        if let offset, offset > 0 { sql += (limit == nil ? " LIMIT -1" : "") + " OFFSET \(offset)" }
        return sql
    }
}

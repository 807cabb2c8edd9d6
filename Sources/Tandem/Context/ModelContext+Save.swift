internal import GRDBSQLite

extension ModelContext {
    /// Writes every pending change, delete and insert in one SQLite transaction.
    ///
    /// On error nothing is written and the context keeps its changes, so the caller can fix
    /// them and save again.
    ///
    /// ```swift
    /// do { try context.save() }
    /// catch let error as StoreError where error.code == .uniqueViolation { todo.code = "T-2"; try context.save() }
    /// ```
    ///
    /// - Throws: ``StoreError`` (``StoreError/Code/uniqueViolation``, ``StoreError/Code/busy``,
    ///   ``StoreError/Code/invalidValue``, ``StoreError/Code/misuse``…).
    public func save() throws {
        // Misuse (objects of another context related or inserted) stays an error until
        // rollback(): saving anyway could write a reference to a record this store lacks.
        if let error = pendingErrors.first {
            throw error
        }
        if let error = loadErrors.first {
            loadErrors.removeAll()
            throw StoreError(
                error.code, "a relationship failed to load earlier, so it may have looked empty: \(error.message). Nothing was saved; check the objects and save again",
                entity: error.entity, attribute: error.attribute, underlying: error)
        }
        guard hasChanges else { return }
        let inserts = insertionOrder.compactMap { inserted[$0] }
        let updates = Array(changed.values)
        let deletes = Array(deleted.values)
        let coders = CoderCache()
        let container = self.container
        var current: EntityMapping?
        var deletedIDs: [UUID: EntityMapping] = [:]
        do {
            try Journal.write(container.writer, journal: container.journal, origin: .init(author: author, context: name)) { db in
                for model in updates {
                    let mapping = try container.mapping(for: type(of: model))
                    current = mapping
                    let update = mapping.update(for: model.persistentState.changes)
                    if update.parameters.contains(where: { $0 != 0 }) {
                        let statement = try db.cachedStatement(sql: update.sql)
                        var writer = PersistentRowWriter(statement: statement.sqliteStatement, mapping: mapping, parameters: update.parameters, coders: coders)
                        writer.foreignKeys = model.persistentState.foreignKeys
                        writer.loadedRelationships = model.persistentState.loadedRelationships
                        try model.encodePersistentValues(to: &writer)
                        try Self.bindID(model, statement.sqliteStatement, at: Int32(sqlite3_bind_parameter_count(statement.sqliteStatement)))
                        try Self.step(statement, db)
                    }
                    try JoinRows.write(model, mapping: mapping, schema: container.schema, only: model.persistentState.changes, db: db)
                }
                // Deletes after updates (so the delete rules see relationships changed in this save)
                // and before inserts (so a new record can take a deleted one's unique value):
                // cascade grows the set, deny refuses the whole save.
                var roots: [(EntityMapping, UUID)] = []
                for model in deletes { roots.append((try container.mapping(for: type(of: model)), model.persistentState.uuid)) }
                deletedIDs = try DeleteRules.closure(of: roots, schema: container.schema, mappings: container.mappingsByName, db: db)
                try DeleteRules.extend(&deletedIDs, withPendingInserts: inserts, container: container)
                for (uuid, mapping) in deletedIDs {
                    current = mapping
                    let statement = try db.cachedStatement(sql: "DELETE FROM \(mapping.quotedTable) WHERE \"#id\" = ?")
                    try statement.setArguments([UUIDText.string(uuid)])
                    try Self.step(statement, db)
                }
                var lastType: ObjectIdentifier?
                var statement: Statement?
                var parameters: [Int32] = []
                for model in inserts where deletedIDs[model.persistentState.uuid] == nil {
                    let typeID = ObjectIdentifier(type(of: model))
                    if typeID != lastType {
                        let mapping = try container.mapping(for: type(of: model))
                        current = mapping
                        statement = try db.cachedStatement(sql: mapping.insertSQL)
                        parameters = mapping.insertParameters
                        lastType = typeID
                    }
                    guard let statement, let mapping = current else { continue }
                    let sqlite = statement.sqliteStatement
                    try Self.bindID(model, sqlite, at: 1)
                    var writer = PersistentRowWriter(statement: sqlite, mapping: mapping, parameters: parameters, coders: coders)
                    writer.foreignKeys = model.persistentState.foreignKeys
                    writer.loadedRelationships = model.persistentState.loadedRelationships
                    try model.encodePersistentValues(to: &writer)
                    container.journal.state.bindStamps(to: sqlite, at: Int32(mapping.columns.count + 1))
                    try Self.step(statement, db)
                }
                for model in inserts where deletedIDs[model.persistentState.uuid] == nil {
                    let mapping = try container.mapping(for: type(of: model))
                    try JoinRows.write(model, mapping: mapping, schema: container.schema, only: nil, db: db)
                }
                // Referential integrity: nothing may point at a deleted record any more.
                try DeleteRules.clearReferences(to: deletedIDs, schema: container.schema, db: db)
            }
        } catch let error as DatabaseError {
            throw StoreErrorMapping.storeError(error, mapping: current)
        }
        for model in inserts {
            model.persistentState.status = .registered
            model.persistentState.changes.removeAll()
        }
        for model in updates { model.persistentState.changes.removeAll() }
        for model in deletes { model.persistentState.context = nil }
        if !deletedIDs.isEmpty {
            // Cascaded deletes and references to deleted records: forget them in memory, and
            // let relationships reload on next access.
            for (uuid, _) in deletedIDs {
                if let model = registered.removeValue(forKey: uuid)?.model {
                    model.persistentState.status = .deleted
                    model.persistentState.context = nil
                }
            }
            for entry in registered.values {
                guard let model = entry.model else { continue }
                model.persistentState.loadedRelationships.removeAll()
                model.persistentState.foreignKeys = model.persistentState.foreignKeys.filter { deletedIDs[$0.value] == nil }
            }
        }
        inserted = [:]
        insertionOrder = []
        changed = [:]
        deleted = [:]
    }

    private static func bindID(_ model: any PersistentModel, _ statement: OpaquePointer, at index: Int32) throws {
        let code = try model.persistentState.uuid.sqliteBind(to: statement, at: index)
        if code != SQLITE_OK { throw StoreError(.sqlite, "binding the record id failed with code \(code)") }
    }

    /// Runs a statement that returns no rows, bound by hand (faster than GRDB arguments).
    static func step(_ statement: Statement, _ db: Database) throws {
        let sqlite = statement.sqliteStatement
        let code = sqlite3_step(sqlite)
        if code != SQLITE_DONE && code != SQLITE_ROW {
            let message = String(cString: sqlite3_errmsg(db.sqliteConnection))
            let extended = sqlite3_extended_errcode(db.sqliteConnection)
            sqlite3_reset(sqlite)
            throw DatabaseError(resultCode: ResultCode(rawValue: extended), message: message, sql: statement.sql)
        }
        sqlite3_reset(sqlite)
    }
}

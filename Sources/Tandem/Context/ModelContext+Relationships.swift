// Loading relationships: lazily on first access, or for many objects at once (prefetching).

extension ModelContext {
    /// The destination of a to-one relationship: from the identity map, or fetched.
    func resolveToOne<M: PersistentModel>(_: M.Type, uuid: UUID) -> M? {
        if let existing = registered[uuid]?.model as? M { return existing.isDeleted ? nil : existing }
        do {
            return try fetchOne(opened: M.self, uuid: uuid)
        } catch {
            loadErrors.append(error as? StoreError ?? StoreError(.sqlite, "loading \(M.entityName) \(uuid) failed: \(error)", underlying: error))
            return nil
        }
    }

    /// The members of a to-many relationship of `owner`, in one query.
    func loadToMany<O: PersistentModel, M: PersistentModel>(_: M.Type, owner: O, property: Int) -> [M] {
        do {
            let mapping = try container.mapping(for: O.self)
            let uuid = owner.uuidAssigningIfNeeded
            return try related(M.self, ownerMapping: mapping, property: property, owners: [uuid])[uuid] ?? []
        } catch {
            loadErrors.append(error as? StoreError ?? StoreError(.sqlite, "loading \(O.entityName).\(O.schemaMetadata[property].name) failed: \(error)", underlying: error))
            return []
        }
    }

    /// The members of a to-many relationship for many owners, in one query per 10 000 owners.
    func related<M: PersistentModel>(_: M.Type, ownerMapping: EntityMapping, property: Int, owners: [UUID]) throws -> [UUID: [M]] {
        guard let relationship = ownerMapping.relationship(ofProperty: property) else { return [:] }
        let destination = try container.mapping(for: M.self)
        let table: String
        let ownerColumn: Int32
        switch container.schema.storage(of: relationship, in: ownerMapping.entity) {
        case .inverseForeignKey:
            guard let inverse = relationship.inverse, let index = destination.propertyIndex(named: inverse) else { return [:] }
            ownerColumn = destination.columnStart[index]
            table = "\(destination.selectSQL) WHERE t.\(SQLName.quote(inverse)) IN "
        case .joinTable(let name, let mine, let theirs):
            ownerColumn = Int32(destination.columns.count)
            table = "\(destination.selectSQL.replacingOccurrences(of: " FROM ", with: ", j.\(mine) FROM ")) JOIN \(SQLName.quote(name)) AS j ON j.\(theirs) = t.\"#id\" WHERE j.\(mine) IN "
        case .foreignKey:
            return [:]
        }
        var result: [UUID: [M]] = [:]
        var start = 0
        while start < owners.count {
            let chunk = owners[start..<min(start + 10_000, owners.count)]
            start += chunk.count
            let sql = table + "(" + Array(repeating: "?", count: chunk.count).joined(separator: ", ") + ")"
            var owners: [UUID?] = []
            let models: [M] = try StoreErrorMapping.map(mapping: destination) {
                try container.writer.read { db in
                    let statement = try db.makeStatement(sql: sql)
                    try statement.setArguments(StatementArguments(chunk.map { UUIDText.string($0).databaseValue }))
                    return try materializeWithOwners(statement: statement, db: db, mapping: destination, skipping: [], ownerColumn: ownerColumn, owners: &owners)
                }
            }
            for (model, owner) in zip(models, owners) where !model.isDeleted {
                if let owner { result[owner, default: []].append(model) }
            }
        }
        return result
    }

    /// Loads the relationships named by `keyPaths` for all `models` (one query each).
    func prefetch<T: PersistentModel>(_ keyPaths: [PartialKeyPath<T>], for models: [T], mapping: EntityMapping) throws {
        guard !models.isEmpty else { return }
        for keyPath in keyPaths {
            guard let index = mapping.attribute(for: keyPath), let target = mapping.properties[index].relationship else {
                throw StoreError(.unsupportedPredicate, "\(keyPath) is not a relationship of \(mapping.name); relationshipKeyPathsForPrefetching takes relationship key paths", entity: mapping.name)
            }
            try prefetch(target.destination, keyPath: mapping.properties[index].keyPath, index: index, isToMany: target.isToMany, models: models, mapping: mapping)
        }
    }

    private func prefetch<T: PersistentModel, M: PersistentModel>(
        _: M.Type, keyPath: AnyKeyPath, index: Int, isToMany: Bool,
        models: [T], mapping: EntityMapping
    ) throws {
        let pending = models.filter { $0.needsLoading(index) }
        guard !pending.isEmpty else { return }
        if isToMany {
            guard let path = keyPath as? ReferenceWritableKeyPath<T, [M]> else { return }
            let members = try related(M.self, ownerMapping: mapping, property: index, owners: pending.map(\.uuidAssigningIfNeeded))
            for model in pending { fill(model, path, with: members[model.uuidAssigningIfNeeded] ?? [], index: index) }
        } else {
            guard let path = keyPath as? ReferenceWritableKeyPath<T, M?> else { return }
            let wanted = Set(pending.compactMap { $0.persistentState.foreignKeys[index] })
            let missing = wanted.filter { registered[$0]?.model == nil }
            // The identity map holds objects weakly: keep the fetched ones alive until their
            // owners hold them.
            var fetched: [UUID: M] = [:]
            if !missing.isEmpty {
                let destination = try container.mapping(for: M.self)
                let ids = Array(missing)
                var start = 0
                while start < ids.count {
                    let chunk = ids[start..<min(start + 10_000, ids.count)]
                    start += chunk.count
                    let sql = "\(destination.selectSQL) WHERE t.\"#id\" IN (\(Array(repeating: "?", count: chunk.count).joined(separator: ", ")))"
                    let rows: [M] = try fetchRows(destination, sql: sql, arguments: chunk.map { UUIDText.string($0).databaseValue }, skipping: [])
                    for row in rows { fetched[row.persistentState.uuid] = row }
                }
            }
            for model in pending {
                let target = model.persistentState.foreignKeys[index].flatMap { fetched[$0] ?? registered[$0]?.model as? M }
                fill(model, path, with: target, index: index)
            }
        }
    }

    /// Sets relationship storage loaded by the store: observers are told, nothing is tracked.
    func fill<T: PersistentModel, V>(_ model: T, _ path: ReferenceWritableKeyPath<T, V>, with value: V, index: Int) {
        model.persistentState.loadedRelationships.insert(index)
        model.persistentState.isFilling = true
        model[keyPath: path] = value
        model.persistentState.isFilling = false
    }
}

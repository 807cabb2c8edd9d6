/// Delete rules and referential integrity, run inside a save's transaction.
enum DeleteRules {
    /// Every record to delete: `roots` plus what `.cascade` reaches (cycles terminate).
    ///
    /// - Throws: ``StoreError/Code/constraintViolation`` naming the relationship when a
    ///   `.deny` relationship still has related records outside the set.
    static func closure(
        of roots: [(EntityMapping, UUID)], schema: Schema, mappings: [String: EntityMapping],
        db: Database
    ) throws -> [UUID: EntityMapping] {
        try closure(of: roots, entity: \.entity, named: { mappings[$0] }, schema: schema, db: db)
    }

    /// The same over any owner of an entity: model mappings for a save, the schema's
    /// entities for a store opened from its schema alone (the CLI).
    static func closure<Owner>(
        of roots: [(Owner, UUID)], entity: (Owner) -> Schema.Entity, named: (String) -> Owner?, schema: Schema,
        db: Database
    ) throws -> [UUID: Owner] {
        var set: [UUID: Owner] = [:]
        var queue = roots
        var denials: [(entity: String, relationship: String, related: [UUID])] = []
        while let (owner, uuid) = queue.popLast() {
            guard set[uuid] == nil else { continue }
            set[uuid] = owner
            let source = entity(owner)
            for relationship in source.relationships where relationship.deleteRule == .cascade || relationship.deleteRule == .deny {
                guard let destination = named(relationship.destination) else { continue }
                let related = try relatedIDs(of: uuid, relationship, in: source, schema: schema, db: db)
                if relationship.deleteRule == .cascade {
                    queue += related.filter { set[$0] == nil }.map { (destination, $0) }
                } else if !related.isEmpty {
                    denials.append((source.name, relationship.name, related))
                }
            }
        }
        for denial in denials {
            let blocking = denial.related.filter { set[$0] == nil }
            if !blocking.isEmpty {
                throw StoreError(
                    .constraintViolation,
                    "cannot delete: \(denial.entity).\(denial.relationship) has the delete rule .deny and still relates to \(blocking.count) record(s); remove them from the relationship or delete them first. Nothing was saved",
                    entity: denial.entity, attribute: denial.relationship)
            }
        }
        return set
    }

    /// Applies the delete rules to objects inserted in the same save: a new object whose
    /// to-one points into the deleted set is deleted with it under `.cascade` (never written),
    /// and refuses the save under `.deny`. Repeats until nothing changes.
    static func extend(
        _ set: inout [UUID: EntityMapping], withPendingInserts inserts: [any PersistentModel],
        container: ModelContainer
    ) throws {
        guard !set.isEmpty else { return }
        var grew = true
        while grew {
            grew = false
            for model in inserts where set[model.persistentState.uuid] == nil {
                let mapping = try container.mapping(for: type(of: model))
                for (index, target) in model.persistentState.foreignKeys {
                    guard let destination = set[target], let relationship = mapping.relationship(ofProperty: index),
                        let inverseName = relationship.inverse, let inverse = destination.entity.relationship(named: inverseName)
                    else { continue }
                    switch inverse.deleteRule {
                    case .cascade:
                        set[model.persistentState.uuid] = mapping
                        grew = true
                    case .deny:
                        throw StoreError(
                            .constraintViolation,
                            "cannot delete: \(destination.name).\(inverse.name) has the delete rule .deny and a new \(mapping.name) relates to it in this save; nothing was saved",
                            entity: destination.name, attribute: inverse.name)
                    case .nullify, .noAction:
                        continue
                    }
                    break
                }
            }
        }
    }

    /// The UUIDs `uuid` relates to through `relationship`.
    static func relatedIDs(
        of uuid: UUID, _ relationship: Schema.Relationship, in entity: Schema.Entity,
        schema: Schema, db: Database
    ) throws -> [UUID] {
        let id = UUIDText.string(uuid)
        let texts: [String?]
        switch schema.storage(of: relationship, in: entity) {
        case .foreignKey(let column):
            texts = [try String?.fetchOne(db, sql: "SELECT \(SQLName.quote(column)) FROM \(SQLName.quote(entity.name)) WHERE \"#id\" = ?", arguments: [id]) ?? nil]
        case .inverseForeignKey:
            guard let inverse = relationship.inverse else { return [] }
            texts = try String.fetchAll(db, sql: "SELECT \"#id\" FROM \(SQLName.quote(relationship.destination)) WHERE \(SQLName.quote(inverse)) = ?", arguments: [id])
        case .joinTable(let name, let mine, let theirs):
            texts = try String.fetchAll(db, sql: "SELECT \(theirs) FROM \(SQLName.quote(name)) WHERE \(mine) = ?", arguments: [id])
        }
        return texts.compactMap { $0.flatMap(UUIDText.parse) }
    }

    /// Clears every foreign key and join row that points at a deleted record.
    static func clearReferences(to deleted: [UUID: EntityMapping], schema: Schema, db: Database) throws {
        try clearReferences(to: deleted.mapValues(\.name), schema: schema, db: db)
    }

    /// The same with the deleted records' entity names.
    static func clearReferences(to deleted: [UUID: String], schema: Schema, db: Database) throws {
        guard !deleted.isEmpty else { return }
        var byEntity: [String: [String]] = [:]
        for (uuid, name) in deleted { byEntity[name, default: []].append(UUIDText.string(uuid)) }
        for entity in schema.entities {
            for relationship in entity.relationships {
                switch schema.storage(of: relationship, in: entity) {
                case .foreignKey(let column):
                    guard let ids = byEntity[relationship.destination] else { continue }
                    for chunk in ids.chunked(500) {
                        try db.execute(
                            sql: "UPDATE \(SQLName.quote(entity.name)) SET \(SQLName.quote(column)) = NULL WHERE \(SQLName.quote(column)) IN (\(placeholders(chunk.count)))",
                            arguments: StatementArguments(chunk))
                    }
                case .joinTable(let name, let mine, let theirs):
                    for (column, owner) in [(mine, entity.name), (theirs, relationship.destination)] {
                        guard let ids = byEntity[owner] else { continue }
                        for chunk in ids.chunked(500) {
                            try db.execute(sql: "DELETE FROM \(SQLName.quote(name)) WHERE \(column) IN (\(placeholders(chunk.count)))", arguments: StatementArguments(chunk))
                        }
                    }
                case .inverseForeignKey:
                    continue
                }
            }
        }
    }

    static func placeholders(_ count: Int) -> String {
        Array(repeating: "?", count: count).joined(separator: ", ")
    }
}

extension Array {
    func chunked(_ size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}

/// Rows of many-to-many (and inverse-less to-many) join tables.
enum JoinRows {
    /// Rewrites the join rows of `model`'s loaded to-many relationships stored in join tables
    /// (`only`: just the changed properties; `nil`: all, for a new record).
    static func write(_ model: any PersistentModel, mapping: EntityMapping, schema: Schema, only: ChangeSet?, db: Database) throws {
        for (index, kind) in mapping.kinds.enumerated() {
            guard case .relationship(let r) = kind else { continue }
            let relationship = mapping.entity.relationships[r]
            guard relationship.isToMany, only?.contains(index) ?? true,
                case .joinTable(let name, let mine, let theirs) = schema.storage(of: relationship, in: mapping.entity),
                model.persistentState.status != .registered || model.persistentState.loadedRelationships.contains(index),
                let members = members(of: model, keyPath: mapping.properties[index].keyPath)
            else { continue }
            let owner = UUIDText.string(model.persistentState.uuid)
            if only != nil {
                try db.execute(sql: "DELETE FROM \(SQLName.quote(name)) WHERE \(mine) = ?", arguments: [owner])
            }
            let insert = try db.cachedStatement(sql: "INSERT OR IGNORE INTO \(SQLName.quote(name)) (\(mine), \(theirs)) VALUES (?, ?)")
            for member in members {
                try insert.execute(arguments: [owner, UUIDText.string(member)])
            }
        }
    }

    /// The UUIDs in a to-many relationship's storage, read without triggering a load.
    private static func members(of model: any PersistentModel, keyPath: AnyKeyPath) -> [UUID]? {
        guard let value = model[keyPath: keyPath] as? [any PersistentModel] else { return nil }
        return value.map { $0.uuidAssigningIfNeeded }
    }
}

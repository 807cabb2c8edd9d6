/// Deleting by entity name and id, with the schema's delete rules: what a tool without the
/// app's model types (the `tandem` CLI) needs to delete as a model save would.
extension ModelContainer {
    /// Deletes a record and what its delete rules reach, in one journaled transaction:
    /// `.cascade` deletes the related records (and theirs), `.nullify` and `.noAction` clear
    /// the references to every deleted record, `.deny` refuses while related records remain.
    /// Returns the ids deleted, by entity as stored (a renamed model under its first name;
    /// empty when there was no such record).
    ///
    /// ```swift
    /// let deleted = try container.deleteRecord(entity: "Project", id: projectID, author: "tandem")
    /// print(deleted["Todo"]?.count ?? 0, "todos went with it")
    /// ```
    ///
    /// - Throws: ``StoreError`` — ``StoreError/Code/misuse`` for an entity the schema does not
    ///   have, ``StoreError/Code/constraintViolation`` naming the `.deny` relationship that
    ///   refused (nothing is deleted then).
    @discardableResult
    public func deleteRecord(entity name: String, id: UUID, author: String? = nil) throws -> [String: [UUID]] {
        // A renamed model by its class name or its first name (the table's name).
        guard let entity = schema.entity(named: declaredSchema.storedEntityName(name)) else {
            throw StoreError(.misuse, "the store has no entity '\(name)'; it has \(declaredSchema.entities.map(\.name).sorted().joined(separator: ", "))")
        }
        let schema = self.schema
        return try write(author: author) { db in
            let exists = try Bool.fetchOne(db, sql: "SELECT 1 FROM \(SQLName.quote(entity.name)) WHERE \"#id\" = ?", arguments: [UUIDText.string(id)]) ?? false
            guard exists else { return [:] }
            let deleted = try DeleteRules.closure(of: [(entity, id)], entity: { $0 }, named: { schema.entity(named: $0) }, schema: schema, db: db)
            var byEntity: [String: [UUID]] = [:]
            for (uuid, owner) in deleted { byEntity[owner.name, default: []].append(uuid) }
            for (entityName, ids) in byEntity.sorted(by: { $0.key < $1.key }) {
                for chunk in ids.map(UUIDText.string).chunked(500) {
                    try db.execute(
                        sql: "DELETE FROM \(SQLName.quote(entityName)) WHERE \"#id\" IN (\(DeleteRules.placeholders(chunk.count)))",
                        arguments: StatementArguments(chunk))
                }
            }
            try DeleteRules.clearReferences(to: deleted.mapValues(\.name), schema: schema, db: db)
            return byEntity.mapValues { $0.sorted { $0.uuidString < $1.uuidString } }
        }
    }
}

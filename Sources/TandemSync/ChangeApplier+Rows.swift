import GRDB
import TandemSchema
import TandemSQLite
import TandemWire

/// Pulled inserts written straight from a page's rows (``BulkPage/Row``): a bootstrap's
/// plain inserts skip building a change, its dictionaries and its stamps' text.
extension ChangeApplier {
    /// The shapes of the entities whose plain inserts a page may bring as rows: every entity,
    /// its columns in the order of its insert statement; none when the store renamed an
    /// attribute (its changes go the general way, through ``naming``).
    var rowShapes: [BulkPage.Shape] {
        guard naming.isIdentity else { return [] }
        return schema.entities.compactMap { entity in sql[entity.name].map { BulkPage.Shape(entity: entity.name, columns: $0.columns) } }
    }

    /// A row's `"#hlc"` text: what ``rowStamps(created:columns:stamps:)`` writes for the insert
    /// it was read from.
    static func rowStamps(_ row: BulkPage.Row, _ shape: BulkPage.Shape) -> String {
        // Written straight, in the order `json(_:)` sorts them: "*", then the columns, whose
        // shape has them sorted (a record whose values were edited after it was made has a
        // stamp per value, and a dictionary for each was an eighth of its bootstrap).
        var json = WireJSON()
        json.raw("{\"*\":")
        json.stamp(row.created)
        var stamps = row.stamps
        if !stamps.indices.dropFirst().allSatisfy({ stamps[$0 - 1].column < stamps[$0].column }) { stamps.sort { $0.column < $1.column } }
        for (column, stamp) in stamps where stamp != row.created {
            json.raw(",")
            json.string(shape.columns[column])
            json.raw(":")
            json.stamp(stamp)
        }
        json.raw("}")
        return json.text
    }

    /// Writes `row`, a plain insert of a record of `shape`'s entity, as ``apply(_:_:into:)``
    /// would write it: counted, its tombstone cleared, its references checked. Returns
    /// `false`, having written nothing, when it must go the general way: the record exists
    /// or has an unpushed edit here, a unique value is taken, a merge may redirect it, or an
    /// enum value is not one this store knows.
    ///
    /// ```swift
    /// if try !applier.insert(row, shape: shape, rowStamps: text, db, into: &outcome) {
    ///     try applier.apply(row.entry(dataset: applier.dataset, shape: shape), db, into: &outcome)
    /// }
    /// ```
    ///
    /// - Throws: ``DatabaseError`` when SQLite fails otherwise.
    func insert(_ row: BulkPage.Row, shape: BulkPage.Shape, rowStamps: String, _ db: Database, into outcome: inout Outcome) throws -> Bool {
        let entity = shape.entity
        if merges.any, uniqueEntities.contains(entity) || mergeableReferences[entity] != nil { return false }
        if !pending.isEmpty, pending["tandem://\(dataset)/\(entity)/\(row.id)"] != nil { return false }
        if let cases = enumCases[entity] {
            for (column, known) in cases {
                guard let index = shape.columns.firstIndex(of: column) else { continue }
                if !known.contains(row.values[index]) { return false }
            }
        }
        guard let statements = sql[entity] else { return false }
        do {
            try db.cachedStatement(sql: statements.insertOrIgnore).executeBound { bind in
                bind.text(row.id)
                bind.text(rowStamps)
                for value in row.values { bind.value(value) }
            }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            return false
        }
        guard db.changesCount == 1 else { return false }
        outcome.applied += 1
        let newest = row.stamps.reduce(row.created) { max($0, $1.stamp) }
        outcome.newestStamp = max(outcome.newestStamp ?? newest, newest)
        try recordInsert(of: row.id, entity, db)
        if references[entity] != nil {
            try checkReferences(Dictionary(uniqueKeysWithValues: zip(shape.columns, row.values)), of: entity, row.id, db, &outcome)
        }
        return true
    }
}

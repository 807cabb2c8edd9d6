import Foundation
/// Applies a ``MigrationPlan`` with SQL, inside the caller's transaction.
enum Migrator {
    /// - Parameters:
    ///   - plan: planned between the ``Schema/stored`` forms (entities by identity).
    ///   - declared: the schema as declared (class names, `originalName`s), kept in the
    ///     metadata; its ``Schema/stored`` form is what the SQL works with.
    static func apply(_ plan: MigrationPlan, declared: Schema, mappings: [EntityMapping], db: Database) throws {
        let schema = declared.stored
        let byName = Dictionary(uniqueKeysWithValues: mappings.map { ($0.name, $0) })
        // Journal triggers name every column: rebuild them around the reshaping, which also
        // keeps migration's own row updates (defaults) out of the journal.
        let reshapes = !plan.steps.isEmpty
        if reshapes { try JournalDDL.dropTriggers(db) }
        for step in plan.steps {
            switch step {
            case .createEntity(let entity):
                try db.execute(sql: DDL.createTable(entity))
                for attribute in entity.attributes where attribute.isUnique {
                    try db.execute(sql: DDL.createUniqueIndex(entity: entity.name, attribute: attribute))
                }
                for attribute in entity.attributes where attribute.isIndexed {
                    try db.execute(sql: DDL.createIndex(entity: entity.name, attribute: attribute))
                }
                for relationship in entity.relationships {
                    try DDL.createStorage(of: relationship, in: entity, schema: schema, withColumn: false, db: db)
                }
            case .addAttribute(let entityName, let attribute):
                for column in attribute.columns {
                    try db.execute(sql: "ALTER TABLE \(SQLName.quote(entityName)) ADD COLUMN \(DDL.columnDefinition(column, forAlter: true))")
                }
                if let mapping = byName[entityName], let index = mapping.propertyIndex(named: attribute.name) {
                    try fillDefault(mapping: mapping, attribute: index, db: db)
                } else {
                    // A store opened from its schema JSON alone (the CLI): the default is the
                    // model's Swift source text; a literal is evaluated here, anything else
                    // needs the app's models.
                    try fillLiteralDefault(entity: entityName, attribute: attribute, db: db)
                }
                if attribute.isUnique {
                    try db.execute(sql: DDL.createUniqueIndex(entity: entityName, attribute: attribute))
                }
                if attribute.isIndexed {
                    try db.execute(sql: DDL.createIndex(entity: entityName, attribute: attribute))
                }
            case .renameAttribute(let entityName, let from, let attribute):
                var renamed = attribute
                renamed.name = from
                let stamps = SQLName.quote(JournalDDL.stampColumn)
                try recordFormerNames(entity: entityName, zip(renamed.columns, attribute.columns).map { ($0.name, attribute.wireName(of: $1)) }, db)
                for (old, new) in zip(renamed.columns, attribute.columns) {
                    try db.execute(sql: "ALTER TABLE \(SQLName.quote(entityName)) RENAME COLUMN \(SQLName.quote(old.name)) TO \(SQLName.quote(new.name))")
                    // Each row's stamp of the column goes with it (the sync's last-writer-wins
                    // compares it); the triggers are off, so this is no edit.
                    let from = "$.\"" + old.name.replacingOccurrences(of: "\"", with: "\\\"") + "\""
                    let to = "$.\"" + new.name.replacingOccurrences(of: "\"", with: "\\\"") + "\""
                    try db.execute(
                        sql: """
                            UPDATE \(SQLName.quote(entityName)) SET \(stamps) = json_set(json_remove(\(stamps), ?1), ?2, json_extract(\(stamps), ?1))
                            WHERE json_valid(\(stamps)) AND json_extract(\(stamps), ?1) IS NOT NULL
                            """, arguments: [from, to])
                }
            case .addUniqueIndex(let entityName, let attribute):
                try db.execute(sql: DDL.createUniqueIndex(entity: entityName, attribute: attribute))
            case .dropUniqueIndex(let entityName, let attribute):
                try db.execute(sql: "DROP INDEX IF EXISTS \(SQLName.quote(DDL.uniqueIndexName(entity: entityName, attribute: attribute)))")
            case .addRelationship(let entityName, let relationship):
                guard let entity = schema.entity(named: entityName) else { continue }
                try DDL.createStorage(of: relationship, in: entity, schema: schema, withColumn: true, db: db)
            case .addIndex(let entityName, let attribute):
                try db.execute(sql: DDL.createIndex(entity: entityName, attribute: attribute))
            case .dropIndex(let entityName, let attribute):
                try db.execute(sql: "DROP INDEX IF EXISTS \(SQLName.quote(DDL.indexName(entity: entityName, attribute: attribute)))")
            }
        }
        if reshapes { try JournalDDL.createTriggers(for: schema, db) }
        try StoreFile.setMetadata("schema", String(decoding: try declared.canonicalJSON(), as: UTF8.self), db)
    }

    /// Remembers that columns of `entity` had other names (`old` → the name they sync
    /// under): journaled edits not pushed yet still name them so, and a push sends them under
    /// the name they sync under (`ModelContainer.formerColumnNames()`).
    static func recordFormerNames(entity: String, _ names: [(old: String, wire: String)], _ db: Database) throws {
        var former = try formerColumnNames(db)
        for (old, wire) in names where old != wire { former[entity, default: [:]][old] = wire }
        let data = try JSONEncoder().encode(former)
        try StoreFile.setMetadata("formerColumns", String(decoding: data, as: UTF8.self), db)
    }

    /// Entity → former column name → the name it syncs under.
    static func formerColumnNames(_ db: Database) throws -> [String: [String: String]] {
        guard let text = try String.fetchOne(db, sql: "SELECT value FROM tandem_metadata WHERE key = 'formerColumns'") else { return [:] }
        return (try? JSONDecoder().decode([String: [String: String]].self, from: Data(text.utf8))) ?? [:]
    }

    /// Gives existing rows the attribute's default (evaluated once).
    /// Fills a new attribute's columns from its default's source text when it is a literal
    /// (`0`, `-2.5`, `true`, `"text"`, `[]`, `[:]`, `nil`). A nullable attribute without one
    /// stays NULL; a non-optional one whose default is not a literal (`.now`, `Priority.high`,
    /// a struct) is refused, and the migration with it.
    static func fillLiteralDefault(entity: String, attribute: Schema.Attribute, db: Database) throws {
        let columns = attribute.columns.filter { $0.role == .value }
        let needsValue = columns.contains { !$0.isNullable }
        let literal = attribute.defaultValue.flatMap { text in columns.count == 1 ? Self.literal(text, for: columns[0]) : nil }
        guard let value = literal else {
            guard !needsValue else {
                throw StoreError(
                    .schemaMismatch,
                    "'\(entity).\(attribute.name)' is new and not optional, and its default (\(attribute.defaultValue.map { "`\($0)`" } ?? "none")) is not a literal the store can evaluate without the app's models; make it optional, give it a literal default (0, \"text\", true, []), or open the store with the app's model types to migrate it",
                    entity: entity, attribute: attribute.name)
            }
            return
        }
        try db.execute(sql: "UPDATE \(SQLName.quote(entity)) SET \(SQLName.quote(columns[0].name)) = ?", arguments: [value])
    }

    /// The value of a literal default's source text for `column`; `nil` when it is not one.
    static func literal(_ text: String, for column: Schema.Column) -> DatabaseValue? {
        switch Schema.Literal(defaultValue: text, for: column) {
        case nil: nil
        case .null: .null
        case .integer(let value): value.databaseValue
        case .real(let value): value.databaseValue
        case .text(let value): value.databaseValue
        }
    }

    private static func fillDefault(mapping: EntityMapping, attribute index: Int, db: Database) throws {
        guard let makeDefault = mapping.properties[index].makeDefault else { return }
        let values = try PersistentRowWriter.databaseValues(of: makeDefault(), attribute: index, mapping: mapping, coders: CoderCache())
        guard let columns = mapping.attribute(ofProperty: index)?.columns else { return }
        let assignments = columns.map { "\(SQLName.quote($0.name)) = ?" }.joined(separator: ", ")
        try db.execute(sql: "UPDATE \(mapping.quotedTable) SET \(assignments)", arguments: StatementArguments(values))
    }
}

/// Table and index definitions.
enum DDL {
    static func createTable(_ entity: Schema.Entity) -> String {
        let columns = entity.columns.map { column in
            column.role == .primaryKey
                ? "\(SQLName.quote(column.name)) TEXT NOT NULL PRIMARY KEY"
                : columnDefinition(column, forAlter: false)
        }
        let stamps = "\(SQLName.quote(JournalDDL.stampColumn)) TEXT"
        return "CREATE TABLE \(SQLName.quote(entity.name)) (\((columns + [stamps]).joined(separator: ", ")))"
    }

    /// A column definition. Added columns that are NOT NULL need a constant default for the
    /// existing rows; Tandem then overwrites it with the attribute's own default.
    static func columnDefinition(_ column: Schema.Column, forAlter: Bool) -> String {
        var definition = "\(SQLName.quote(column.name)) \(column.sqlType.rawValue)"
        if !column.isNullable {
            definition += " NOT NULL"
            if forAlter {
                switch column.sqlType {
                case .integer, .real: definition += " DEFAULT 0"
                case .text: definition += " DEFAULT ''"
                case .blob: definition += " DEFAULT x''"
                }
            }
        }
        return definition
    }

    static func uniqueIndexName(entity: String, attribute: Schema.Attribute) -> String {
        "\(entity).\(attribute.name).unique"
    }

    /// A relationship's storage: its foreign-key column (when `withColumn`, for an existing
    /// table) and index, or its join table (created once for both sides).
    static func createStorage(
        of relationship: Schema.Relationship, in entity: Schema.Entity, schema: Schema,
        withColumn: Bool, db: Database
    ) throws {
        switch schema.storage(of: relationship, in: entity) {
        case .foreignKey(let column):
            if withColumn {
                try db.execute(sql: "ALTER TABLE \(SQLName.quote(entity.name)) ADD COLUMN \(SQLName.quote(column)) TEXT")
            }
            try db.execute(sql: "CREATE INDEX IF NOT EXISTS \(SQLName.quote("\(entity.name).\(column).index")) ON \(SQLName.quote(entity.name)) (\(SQLName.quote(column)))")
        case .joinTable(let name, _, _):
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS \(SQLName.quote(name)) (source TEXT NOT NULL, target TEXT NOT NULL, PRIMARY KEY (source, target)) WITHOUT ROWID")
            try db.execute(sql: "CREATE INDEX IF NOT EXISTS \(SQLName.quote("\(name).target")) ON \(SQLName.quote(name)) (target)")
        case .inverseForeignKey:
            break
        }
    }

    static func indexName(entity: String, attribute: Schema.Attribute) -> String {
        "\(entity).\(attribute.name).index"
    }

    static func createIndex(entity: String, attribute: Schema.Attribute) -> String {
        let columns = attribute.columns.filter { $0.role == .value }.map { SQLName.quote($0.name) }.joined(separator: ", ")
        return "CREATE INDEX \(SQLName.quote(indexName(entity: entity, attribute: attribute))) ON \(SQLName.quote(entity)) (\(columns))"
    }

    static func createUniqueIndex(entity: String, attribute: Schema.Attribute) -> String {
        let columns = attribute.columns.filter { $0.role == .value }.map { SQLName.quote($0.name) }.joined(separator: ", ")
        return "CREATE UNIQUE INDEX \(SQLName.quote(uniqueIndexName(entity: entity, attribute: attribute))) ON \(SQLName.quote(entity)) (\(columns))"
    }
}

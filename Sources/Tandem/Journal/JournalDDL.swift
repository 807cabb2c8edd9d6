/// The change journal's tables and the triggers that fill them.
///
/// Journal layout (store format 2):
///
/// - `tandem_history_transaction(token, author, timestamp, stamp, context, process,
///   first_change, last_change)`: one row per committed write transaction that changed model
///   data. `token` is `AUTOINCREMENT`, so tokens never repeat, even after history is deleted.
///   The transaction's changes are the rows `first_change...last_change` of the change table.
/// - `tandem_history_change(id, token, kind, entity, record, values, stamps)`: one row per
///   record change, in commit order. `values` holds the column names and new values in the
///   binary form of ``JournalValueCoding``; `stamps` is `NULL` when every column carries the
///   transaction's stamp, else a JSON object from column name to HLC stamp, where `"*"`
///   stamps every column not named.
/// - `tandem_history_reader(name, acknowledged)`: registered readers and the last token each
///   has processed; ``ModelContext/deleteHistory(before:)`` keeps what they still need.
///
/// Every entity table has a hidden `"#hlc"` column with the latest stamp per column (same
/// JSON form as `stamps`). Triggers journal every insert, update and delete, whoever makes
/// it: model saves, raw SQL through ``ModelContainer/write(author:_:)``, cascades, join rows.
/// The triggers call SQL functions only Tandem's connections define, so a program writing
/// the file without Tandem gets an error instead of an unjournaled change. Each trigger runs
/// `WHEN tandem_journal_on()`: false only inside ``ModelContainer/writeUnjournaled(author:context:_:)``
/// (a sync bootstrap), whose transaction the journal records as one marker with no changes.
enum JournalDDL {
    static let triggerPrefix = "tandem.journal."
    static let stampColumn = "#hlc"

    static let createTables = [
        """
        CREATE TABLE IF NOT EXISTS tandem_history_transaction (
            token INTEGER PRIMARY KEY AUTOINCREMENT,
            author TEXT,
            timestamp REAL NOT NULL,
            stamp TEXT NOT NULL,
            context TEXT,
            process TEXT NOT NULL,
            first_change INTEGER NOT NULL,
            last_change INTEGER NOT NULL)
        """,
        """
        CREATE TABLE IF NOT EXISTS tandem_history_change (
            id INTEGER PRIMARY KEY,
            token INTEGER NOT NULL,
            kind TEXT NOT NULL,
            entity TEXT NOT NULL,
            record TEXT NOT NULL,
            "values" BLOB NOT NULL,
            stamps TEXT)
        """,
        "CREATE TABLE IF NOT EXISTS tandem_history_reader (name TEXT NOT NULL PRIMARY KEY, acknowledged INTEGER NOT NULL)",
    ]

    /// Drops every journal trigger (before a migration reshapes tables).
    static func dropTriggers(_ db: Database) throws {
        let names = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'trigger' AND substr(name, 1, \(triggerPrefix.count)) = ?", arguments: [triggerPrefix])
        for name in names { try db.execute(sql: "DROP TRIGGER \(SQLName.quote(name))") }
    }

    /// Creates the triggers for every entity table and join table of `schema`.
    static func createTriggers(for schema: Schema, _ db: Database) throws {
        for entity in schema.entities {
            for sql in triggers(for: entity) { try db.execute(sql: sql) }
            for relationship in entity.relationships {
                if case .joinTable(let table, "source", _) = schema.storage(of: relationship, in: entity) {
                    for sql in joinTriggers(table: table, entity: entity.name, relationship: relationship.name) { try db.execute(sql: sql) }
                }
            }
        }
    }

    /// The insert, update and delete triggers of one entity table.
    static func triggers(for entity: Schema.Entity) -> [String] {
        let table = SQLName.quote(entity.name)
        let name = literal(entity.name)
        let stamp = SQLName.quote(stampColumn)
        let columns = entity.columns.filter { $0.role != .primaryKey }
        let id = "\"#id\""
        let newValues = JournalValueCoding.sql("tandem_journal_values", columns.map { "\(literal($0.name)), NEW.\(SQLName.quote($0.name))" })
        let insert = """
            CREATE TRIGGER \(SQLName.quote(triggerPrefix + entity.name + ".insert")) AFTER INSERT ON \(table) WHEN tandem_journal_on() BEGIN
            UPDATE \(table) SET \(stamp) = tandem_journal_stamps() WHERE NEW.\(stamp) IS NULL AND \(id) = NEW.\(id);
            INSERT INTO tandem_history_change (token, kind, entity, record, "values", stamps)
            VALUES (tandem_journal_token(), 'insert', \(name), NEW.\(id), \(newValues),
                    CASE WHEN NEW.\(stamp) IS NULL OR NEW.\(stamp) = tandem_journal_stamps() THEN NULL ELSE NEW.\(stamp) END);
            END
            """
        let tombstoneColumns = entity.attributes
            .filter { $0.isUnique || $0.options.contains(.preserveValueOnDeletion) }
            .flatMap(\.columns)
        let tombstone = JournalValueCoding.sql("tandem_journal_values", tombstoneColumns.map { "\(literal($0.name)), OLD.\(SQLName.quote($0.name))" })
        let delete = """
            CREATE TRIGGER \(SQLName.quote(triggerPrefix + entity.name + ".delete")) AFTER DELETE ON \(table) WHEN tandem_journal_on() BEGIN
            INSERT INTO tandem_history_change (token, kind, entity, record, "values", stamps)
            VALUES (tandem_journal_token(), 'delete', \(name), OLD.\(id), \(tombstone), NULL);
            END
            """
        guard !columns.isEmpty else { return [insert, delete] }
        func differs(_ column: Schema.Column) -> String {
            "OLD.\(SQLName.quote(column.name)) IS NOT NEW.\(SQLName.quote(column.name))"
        }
        // Every column changes on its own, a composite's leaves included: concurrent edits
        // of `people.name` and `people.age` on two replicas both survive (docs/sync.md).
        let changedValues = JournalValueCoding.sql("tandem_journal_changes", columns.map { "\(differs($0)), \(literal($0.name)), NEW.\(SQLName.quote($0.name))" })
        let restamp = JournalValueCoding.sql("tandem_journal_restamp", columns.map { "\(differs($0)), \(literal($0.name))" }, seed: "OLD.\(stamp)")
        let update = """
            CREATE TRIGGER \(SQLName.quote(triggerPrefix + entity.name + ".update")) AFTER UPDATE ON \(table)
            WHEN tandem_journal_on() AND (\(columns.map(differs).joined(separator: " OR "))) BEGIN
            UPDATE \(table) SET \(stamp) = \(restamp)
                WHERE NEW.\(stamp) IS OLD.\(stamp) AND \(id) = NEW.\(id);
            INSERT INTO tandem_history_change (token, kind, entity, record, "values", stamps)
            VALUES (tandem_journal_token(), 'update', \(name), NEW.\(id), \(changedValues),
                    (SELECT \(stamp) FROM \(table) WHERE \(id) = NEW.\(id)));
            END
            """
        return [insert, update, delete]
    }

    /// Link and unlink triggers of a many-to-many join table (`source` is `entity`'s side).
    static func joinTriggers(table: String, entity: String, relationship: String) -> [String] {
        ["link": ("INSERT", "NEW"), "unlink": ("DELETE", "OLD")].sorted { $0.key < $1.key }.map { kind, event in
            """
            CREATE TRIGGER \(SQLName.quote(triggerPrefix + table + "." + kind)) AFTER \(event.0) ON \(SQLName.quote(table)) WHEN tandem_journal_on() BEGIN
            INSERT INTO tandem_history_change (token, kind, entity, record, "values", stamps)
            VALUES (tandem_journal_token(), '\(kind)', \(literal(entity)), \(event.1).source, tandem_journal_values(NULL, \(literal(relationship)), \(event.1).target), NULL);
            END
            """
        }
    }

    static func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }
}

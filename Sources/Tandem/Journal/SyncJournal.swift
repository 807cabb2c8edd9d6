package import GRDB
package import TandemSchema

/// What the sync engine reads of a store beyond its public API, named here so the engine
/// writes no SQL against the journal's or the metadata's tables: the journal's transactions
/// by author, the rows the journal holds no insert for, and the columns every entity table
/// has. (The store's HLC node is ``ModelContainer/hlcNode``.) `package`: for `TandemSync`, not for apps.
///
/// ```swift
/// let newest = try SyncJournal.newestTransaction(after: acknowledged, allBy: "sync", db)
/// let sql = "SELECT \(SyncJournal.stampColumn) FROM \(SQLName.quote("Todo")) WHERE \(SyncJournal.idColumn) = ?"
/// ```
package enum SyncJournal {
    /// An entity table's primary key column, quoted (`"#id"`): the record's UUID, lowercase.
    package static let idColumn = SQLName.quote(Schema.Column.primaryKey.name)
    /// An entity table's stamps column, quoted (`"#hlc"`): the row's HLC stamps as JSON.
    package static let stampColumn = SQLName.quote(JournalDDL.stampColumn)

    /// The newest transaction's token when every transaction after `token` was written by
    /// `author`; `nil` when there is none after it, or one by another author among them.
    /// One read: call it inside one snapshot.
    ///
    /// - Throws: the database's error.
    package static func newestTransaction(after token: HistoryToken, allBy author: String, _ db: Database) throws -> HistoryToken? {
        guard let newest = try Int64.fetchOne(db, sql: "SELECT MAX(token) FROM tandem_history_transaction"), newest > token.rawValue else { return nil }
        let other =
            try Bool.fetchOne(
                db,
                sql: """
                    SELECT 1 FROM tandem_history_transaction WHERE token > ? AND token <= ? AND (author IS NULL OR author != ?) LIMIT 1
                    """, arguments: [token.rawValue, newest, author]) ?? false
        return other ? nil : HistoryToken(rawValue: newest)
    }

    /// Whether `author` wrote transaction `token` or a later one.
    ///
    /// - Throws: the database's error.
    package static func hasTransaction(by author: String, since token: HistoryToken, _ db: Database) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT 1 FROM tandem_history_transaction WHERE token >= ? AND author = ? LIMIT 1"),
            arguments: [token.rawValue, author]) ?? false
    }

    /// Up to `limit` rows of `entity` after id `after`, in id order, that the journal holds
    /// no insert for (history deleted), or every row when `all`: `"#id"`, `"#hlc"`, then
    /// `columns`. A cursor: a row's text is whole only while it is the current row (a copied
    /// row's text stops at a NUL).
    ///
    /// - Throws: the database's error.
    package static func rowsWithoutJournaledInsert(
        entity: String, columns: [String], after: String, limit: Int, all: Bool = false,
        _ db: Database
    ) throws -> RowCursor {
        let unjournaled = all ? "" : " AND \(idColumn) NOT IN (SELECT record FROM tandem_history_change WHERE entity = ? AND kind = 'insert')"
        return try Row.fetchCursor(
            db,
            sql: """
                SELECT \(idColumn), \(stampColumn)\(columns.map { ", " + SQLName.quote($0) }.joined()) FROM \(SQLName.quote(entity))
                WHERE \(idColumn) > ?\(unjournaled)
                ORDER BY \(idColumn) LIMIT ?
                """, arguments: all ? [after, limit] : [after, entity, limit])
    }
}

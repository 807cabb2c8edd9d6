/// The change journal, read through the container (usable from any task).
extension ModelContainer {
    /// Committed history transactions matching `descriptor`, oldest first, with their changes.
    ///
    /// ```swift
    /// let recent = try container.fetchHistory(HistoryDescriptor(after: lastToken))
    /// ```
    ///
    /// - Throws: ``StoreError`` (``StoreError/Code/corruptFile`` for an unreadable entry).
    public func fetchHistory(_ descriptor: HistoryDescriptor) throws -> [HistoryTransaction] {
        var descriptor = descriptor
        // The journal names a renamed model by its first name (its entityName).
        descriptor.entityNames = descriptor.entityNames.map { Set($0.map(declaredSchema.storedEntityName)) }
        return try StoreErrorMapping.map { [descriptor] in try writer.read { db in try Journal.fetch(db, dataset: dataset, descriptor: descriptor) } }
    }

    /// The token of the latest committed history transaction (``HistoryToken/start`` when
    /// there is none).
    public func currentHistoryToken() throws -> HistoryToken {
        try StoreErrorMapping.map { HistoryToken(rawValue: try writer.read(Journal.latestToken)) }
    }

    /// Deletes history transactions before `token`, except those a registered reader has not
    /// acknowledged yet. Returns how many transactions were deleted.
    ///
    /// ```swift
    /// try container.deleteHistory(before: tokenFromLastWeek)
    /// ```
    @discardableResult
    public func deleteHistory(before token: HistoryToken) throws -> Int {
        try StoreErrorMapping.map { try writer.write { db in try Journal.deleteHistory(db, before: token) } }
    }

    /// Registers a reader whose unacknowledged history ``deleteHistory(before:)`` keeps.
    /// Registering an existing reader changes nothing.
    ///
    /// - Parameter token: What the reader has already processed (`nil`: nothing, so all
    ///   current history is kept for it).
    public func registerHistoryReader(_ name: String, acknowledged token: HistoryToken? = nil) throws {
        try StoreErrorMapping.map { try writer.write { db in try Journal.registerReader(db, name: name, from: token) } }
    }

    /// Records that `reader` processed every transaction up to `token` (never moves back).
    ///
    /// - Throws: ``StoreError/Code/misuse`` when no such reader is registered.
    public func acknowledgeHistory(through token: HistoryToken, reader: String) throws {
        try StoreErrorMapping.map { try writer.write { db in try Journal.acknowledge(db, reader: reader, through: token) } }
    }

    /// Removes a reader: its unacknowledged history may be deleted from now on.
    public func unregisterHistoryReader(_ name: String) throws {
        try StoreErrorMapping.map { try writer.write { db in try db.execute(sql: "DELETE FROM tandem_history_reader WHERE name = ?", arguments: [name]) } }
    }

    /// The registered history readers.
    public func historyReaders() throws -> [HistoryReader] {
        try StoreErrorMapping.map { try writer.read(Journal.readers) }
    }

    /// Committed history transactions as they happen — this container's and other
    /// processes' writes to the same file — starting after `token` (`nil`: from now on).
    ///
    /// The sequence checks the journal every ``ModelConfiguration/historyPollInterval`` and
    /// ends when the consuming task is cancelled.
    ///
    /// ```swift
    /// for await transaction in container.historyTransactions() {
    ///     print("committed", transaction.token, transaction.changes.count, "changes")
    /// }
    /// ```
    public func historyTransactions(after token: HistoryToken? = nil) -> HistoryTransactions {
        HistoryTransactions(container: self, after: token, interval: configurations[0].historyPollInterval)
    }
}

extension ModelContainer {
    /// Makes the store's hybrid logical clock move past `stamp`, inside a write: every later
    /// local edit is stamped after it (an HLC "receive"). The sync engine calls it with the
    /// newest stamp it applied.
    ///
    /// ```swift
    /// try container.write(author: "sync") { db in
    ///     // … apply remote values …
    ///     try ModelContainer.advanceClock(past: newestRemoteStamp, in: db)
    /// }
    /// ```
    ///
    /// - Throws: the database's error.
    package static func advanceClock(past stamp: HLCTimestamp, in db: Database) throws {
        try StoreFile.advanceClock(past: stamp, received: true, db)
    }

    /// Whether every row of the store has its insert in the journal: no history was ever
    /// deleted (the transaction tokens, `AUTOINCREMENT` from 1, are all still there). The sync engine's
    /// first push then needs no snapshot of the rows.
    ///
    /// Two edits outside Tandem's API fool it: changing a row's `"#id"` with raw SQL (the
    /// journal records values, not ids, so the new id has no insert) and deleting the
    /// journal's `sqlite_sequence` row. Neither is supported.
    ///
    /// ```swift
    /// let complete = try container.read { db in try ModelContainer.journalHoldsEveryInsert(db) }
    /// ```
    ///
    /// - Throws: the database's error.
    package static func journalHoldsEveryInsert(_ db: Database) throws -> Bool {
        let kept = try Int64.fetchOne(db, sql: "SELECT COUNT(*) FROM tandem_history_transaction") ?? 0
        let issued = try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'tandem_history_transaction'") ?? 0
        return kept == issued
    }
}

extension ModelContext {
    /// Committed history transactions matching `descriptor`, oldest first, with their changes.
    ///
    /// Every save of every context, and every raw write through
    /// ``ModelContainer/write(author:_:)``, is one transaction (when it changed anything).
    ///
    /// ```swift
    /// var descriptor = HistoryDescriptor(after: lastToken)
    /// descriptor.authors = ["importer"]
    /// for transaction in try context.fetchHistory(descriptor) {
    ///     for change in transaction.changes { print(change.kind, change.persistentModelID, change.values) }
    /// }
    /// ```
    ///
    /// - Throws: ``StoreError`` (``StoreError/Code/corruptFile`` for an unreadable entry).
    public func fetchHistory(_ descriptor: HistoryDescriptor) throws -> [HistoryTransaction] {
        try container.fetchHistory(descriptor)
    }

    /// Deletes history transactions before `token`, except those a registered reader (see
    /// ``ModelContainer/registerHistoryReader(_:acknowledged:)``) has not acknowledged.
    ///
    /// ```swift
    /// try context.deleteHistory(before: oldToken)
    /// ```
    @discardableResult
    public func deleteHistory(before token: HistoryToken) throws -> Int {
        try container.deleteHistory(before: token)
    }
}

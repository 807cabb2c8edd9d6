extension ModelContext {
    /// Brings this context's objects up to date with history transactions committed
    /// elsewhere: another context, another process, or the sync engine's pulls (author
    /// `sync`). Each object this context holds that a transaction changed is read again from
    /// the store (its properties change through Observation, so views that show it update);
    /// one the store no longer has is marked deleted (``PersistentModel/isDeleted``). Objects
    /// with unsaved changes keep them: the next ``save()`` writes them over (they are newer).
    /// Records this context holds no object of are skipped: the next fetch reads them.
    ///
    /// ```swift
    /// // An app: show what other devices push, live (the engine runs with runLive).
    /// Task { @MainActor in
    ///     for await transaction in container.historyTransactions() where transaction.author == "sync" {
    ///         context.merge([transaction])
    ///     }
    /// }
    /// ```
    ///
    /// - Returns: how many objects were read again or marked deleted.
    @discardableResult
    public func merge(_ transactions: [HistoryTransaction]) -> Int {
        var touched: [UUID: any PersistentModel] = [:]
        for transaction in transactions {
            for change in transaction.changes {
                let id = change.persistentModelID
                guard id.dataset == container.dataset, let model = registered[id.uuid]?.model else { continue }
                guard model.persistentState.status == .registered, model.persistentState.changes.isEmpty else { continue }
                touched[id.uuid] = model
            }
        }
        var merged = 0
        for (uuid, model) in touched {
            model.persistentState.loadedRelationships.removeAll()
            let found: (any PersistentModel)?
            do { found = try fetchOne(type(of: model), uuid: uuid) } catch { continue }  // unreadable now: left as it is
            guard let found else {
                // Gone from the store (deleted elsewhere): this context lets it go too.
                registered.removeValue(forKey: uuid)
                changed.removeValue(forKey: ObjectIdentifier(model))
                model.persistentState.status = .deleted
                merged += 1
                continue
            }
            if found === model { merged += 1 }
        }
        return merged
    }
}

import Foundation
import GRDB
import Tandem
import TandemSchema
import TandemSQLite
import TandemWire

extension SyncEngine {
    /// Starts a bootstrap when the store has no cursor and no records (it never pulled), and
    /// says whether one is under way (a cut one resumes).
    ///
    /// A store with records of its own and no cursor (its first sync, a resync) pulls the log
    /// from the start instead, while the server has it: replaying the history against its
    /// own values logs every one of them that lost to a concurrent write (a snapshot holds
    /// only the winners). Where the log is gone (`cursor_expired`), it bootstraps over its
    /// records (mode 2).
    func startBootstrapIfNeeded() throws -> Bool {
        // Read first: every pull asks, and almost always the store has a cursor.
        guard let state = try read({ db in try SyncState.read(db) }) else { return false }
        if state.bootstrapMode != 0 { return true }
        guard state.cursor.isEmpty else { return false }
        return try store { db in
            // Checked again in the write (another process may have started or ended one).
            guard let state = try SyncState.read(db) else { return false }
            if state.bootstrapMode != 0 { return true }
            guard state.cursor.isEmpty else { return false }
            let empty = try container.schema.entities.allSatisfy { entity in
                try !Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(SQLName.quote(entity.name)))")!
            }
            guard empty else { return false }
            // Nothing to sweep: whatever the store holds later came from the snapshot or was
            // made here since.
            try SyncState.update(db) {
                $0.bootstrapMode = 1
                $0.bootstrap = ""
                $0.bootstrapSwept = ""
            }
            return true
        }
    }

    /// Starts the bootstrap again from the snapshot's first page, over the store's records
    /// (mode 2): the server's compaction passed the store's cursor or the snapshot's position.
    func restartBootstrap() throws {
        try store { db in
            try SyncState.update(db) {
                $0.bootstrapMode = 2
                $0.bootstrap = ""
                $0.bootstrapSwept = ""
            }
        }
    }

    /// Reads the dataset's snapshot page by page (`GET …/snapshot`) and applies each page in
    /// one transaction with the next page's token, so a cut bootstrap resumes where it
    /// stopped and nothing is applied twice. Each page is journaled as one marker (author
    /// `sync`, context `snapshot`; ``ModelContainer/writeUnjournaled(author:context:_:)``)
    /// rather than value by value. The last page sets the pull cursor to the snapshot's
    /// position; the log after it is pulled as usual.
    ///
    /// Over records the store has (mode 2: a cursor the server's compaction passed), a record
    /// with no unpushed edit takes the server's state (``ChangeApplier/yieldToServer(_:_:)``),
    /// one with unpushed edits is merged value by value as a pulled change is (they win or
    /// lose by their stamps, and are pushed), and the store's records the snapshot lacks are
    /// deleted: their tombstones were pruned on the server, so they were deleted there long
    /// ago. Records with unpushed local edits stay (the push decides).
    ///
    /// - Throws: ``SyncError`` when a page cannot be read or applied; what was applied stays.
    func bootstrap() async throws -> ChangeApplier.Outcome {
        var total = ChangeApplier.Outcome()
        // The mark first: an edit committed after it is read again before the next page.
        var mark = try historyToken()
        var applier = try makeApplier()
        // Plain inserts come as rows, read and stamped on the fetching thread.
        let shapes = applier.rowShapes
        let uris = applier.dataset
        // The next page, fetched and read while this one is applied; the one after it is
        // asked for as soon as the next one's answer is in (two requests in flight: the
        // server writes one page while the client reads another and applies a third).
        var ahead: (token: String, task: Task<SnapshotPage.Fetched, any Error>)?
        defer { Self.cancel(ahead) }
        var restarts = 0
        let limit = max(capabilities?.maxPageSize ?? 1_000, 1)
        while true {
            // A cancelled sync stops between pages (each page and its token are saved
            // together; the bootstrap goes on from there next time).
            try Task.checkCancellation()
            guard let state = try read({ db in try SyncState.read(db) }), state.bootstrapMode != 0 else { break }
            let token = state.bootstrap
            let fetched: SnapshotPage.Fetched
            do {
                if let next = ahead, next.token == token {
                    ahead = nil
                    fetched = try await next.task.valueCancellingWithCaller()
                } else {
                    Self.cancel(ahead)
                    ahead = nil
                    fetched = try await snapshotPage(after: token, body: nil, limit: limit, shapes: shapes, dataset: uris)
                }
            } catch let error as SyncError where error.serverCode == "cursor_expired" && restarts < 3 {
                // Compaction passed the snapshot's position between two pages: start again,
                // merging over what the pages before brought.
                restarts += 1
                try restartBootstrap()
                continue
            }
            let page = fetched.page
            if page.hasMore {
                let next = page.nextCursor
                let body = fetched.following.flatMap { $0.token == next ? $0.body : nil }
                ahead = (next, Task.detached { [limit] in try await self.snapshotPage(after: next, body: body, limit: limit, shapes: shapes, dataset: uris) })  // not on the engine, busy applying
            } else {
                fetched.following?.body.cancel()
            }
            if hasLocalChanges(after: mark) {
                mark = try historyToken()
                applier.pending = try pendingLocalStamps()
            }
            applier.now = loggedNow()
            let merging = state.bootstrapMode == 2
            let outcome = try storeUnjournaled(context: "snapshot") { db -> ChangeApplier.Outcome? in
                // Another process may have applied this page meanwhile.
                guard let current = try SyncState.read(db), current.bootstrapMode != 0, current.bootstrap == token else { return nil }
                var outcome = ChangeApplier.Outcome()
                // Deletes too, whatever the mode: the app may have inserted records
                // since the bootstrap began (a record deleted on the server, say).
                for index in page.page.items.indices {
                    // A row: written straight, unless it must go the general way.
                    if !merging, case .row(let row) = page.page.items[index],
                        try applier.insert(row, shape: shapes[row.shape], rowStamps: page.rowStamps[index], db, into: &outcome)
                    {
                        continue
                    }
                    let entry = page.entry(at: index)
                    // Over the store's records, the server's state is the truth for a
                    // record with no unpushed edit here: every value it holds was pushed
                    // or pulled, so the server has it or what replaced it, and a
                    // record the server forgot the delete of (tombstone pruned) and
                    // was given again must not keep newer values here than there.
                    if merging, entry.change.kind != .link, entry.change.kind != .unlink, applier.pending[entry.change.record] == nil {
                        try applier.yieldToServer(entry.change, db)
                    }
                    if let reason = try applier.linkWaitsForRecords(entry.change, db) {
                        try applier.quarantine(entry, entry.change, reason, db, &outcome)
                        continue
                    }
                    try applier.apply(entry, db, into: &outcome)
                }
                let last = page.isEmpty ? nil : page.record(at: page.page.items.count - 1)
                if merging, sweepsOnBootstrap {
                    let present = Set(page.page.items.indices.map(page.record(at:)))
                    try sweep(after: current.bootstrapSwept, through: page.hasMore ? last : nil, keeping: present, applier, db, &outcome)
                }
                try SyncState.update(db) {
                    // The snapshot is the state as of its position: the log up to it is seen.
                    if let position = page.lastPosition, position > $0.pulledThrough { $0.pulledThrough = position }
                    $0.replayCursor = ""  // the snapshot's token holds the history now
                    if page.hasMore {
                        $0.bootstrap = page.nextCursor
                        $0.bootstrapSwept = last ?? $0.bootstrapSwept
                    } else {
                        $0.cursor = page.nextCursor
                        $0.bootstrapMode = 0
                        $0.bootstrap = ""
                        $0.bootstrapSwept = ""
                    }
                }
                try SyncStore.saveDangling(outcome.dangling, db)  // with the token: a cut bootstrap keeps them
                if let newest = outcome.newestStamp { try ModelContainer.advanceClock(past: newest, in: db) }
                return outcome
            }
            guard let outcome else {
                Self.cancel(ahead)
                ahead = nil
                continue
            }
            try resolve(outcome.resolutions)
            total.add(outcome)
            configuration.progress?(.pulled(changes: total.applied, hasMore: page.hasMore))
            if !page.hasMore { break }
        }
        total.conflicts += try resolveDangling(with: applier, caughtUpAt: nil)
        // The links set aside until every record was in, and what else waits: applied now,
        // in as many rounds as they let out.
        let retried = try retryPulledQuarantineWhileItShrinks()
        total.applied += retried.applied
        total.conflicts += retried.conflicts
        return total
    }

    /// A page of the dataset's snapshot after `token` ("" for the first), from `body` when its
    /// request was made already, plain inserts of entities in `shapes` read as rows (records
    /// of `uris`, the dataset in record URIs); the request for the page after it is made
    /// before this one is read.
    nonisolated func snapshotPage(
        after token: String, body: Task<Data, any Error>?, limit: Int, shapes: [BulkPage.Shape], dataset uris: String
    ) async throws -> SnapshotPage.Fetched {
        let data: Data
        if let body {
            data = try await body.valueCancellingWithCaller()
        } else {
            data = try await snapshotBody(after: token, limit: limit)
        }
        var following: (token: String, body: Task<Data, any Error>)?
        if let continuation = WireJSONReader.pageContinuation(data), continuation.hasMore {
            let next = continuation.nextCursor
            following = (next, Task.detached { try await self.snapshotBody(after: next, limit: limit) })
        }
        do {
            let page = SnapshotPage(try WireJSONReader.bulkPage(data, dataset: uris, shapes: shapes), dataset: uris, shapes: shapes)
            if Task.isCancelled { following?.body.cancel() }
            return SnapshotPage.Fetched(page: page, following: following)
        } catch {
            following?.body.cancel()
            throw SyncError(.invalidResponse, "the server's snapshot page is unreadable: \(error)")
        }
    }

    /// Cancels a page being fetched, and the request it made for the page after when it had
    /// finished already (a finished task's cancellation reaches nothing).
    nonisolated static func cancel(_ ahead: (token: String, task: Task<SnapshotPage.Fetched, any Error>)?) {
        guard let ahead else { return }
        ahead.task.cancel()
        Task { (try? await ahead.task.value)?.following?.body.cancel() }
    }

    /// The body of the snapshot page after `token` ("" for the first).
    nonisolated func snapshotBody(after token: String, limit: Int) async throws -> Data {
        try await call("GET", "/v1/datasets/\(dataset)/snapshot?after=\(token)&limit=\(limit)", headers: pendingHeader).body
    }

    /// Deletes the store's records whose URIs lie after `lower` and through `upper` (to the
    /// end when `nil`) in byte order, the snapshot's order, and are not in `present`, unless
    /// they have unpushed local edits. Each is deleted as a pulled delete stamped just after
    /// its newest value (delete rules apply; the conflict log gets nothing: no value of it
    /// was newer than what the server holds, which is nothing).
    func sweep(
        after lower: String, through upper: String?, keeping present: Set<String>, _ applier: ChangeApplier, _ db: Database,
        _ outcome: inout ChangeApplier.Outcome
    ) throws {
        for entity in container.schema.entities {
            let prefix = "tandem://\(applier.dataset)/\(entity.name)/"
            guard let range = Self.idRange(prefix: prefix, after: lower, through: upper) else { continue }
            var sql = "SELECT \(ChangeApplier.idColumn), \(ChangeApplier.stampColumn) FROM \(SQLName.quote(entity.name))"
            var conditions: [String] = []
            var arguments: StatementArguments = []
            if let low = range.after {
                conditions.append("\(ChangeApplier.idColumn) > ?")
                arguments += [low]
            }
            if let high = range.through {
                conditions.append("\(ChangeApplier.idColumn) <= ?")
                arguments += [high]
            }
            if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
            let rows = try Row.fetchAll(db, sql: sql, arguments: arguments)
            for row in rows {
                let id: String = row[0]
                let uri = prefix + id
                guard !present.contains(uri), applier.pending[uri] == nil else { continue }
                let newest = (row[1] as String?).flatMap(ChangeApplier.stamps)?.values.max() ?? .zero
                let stamp = HLCTimestamp(physical: newest.physical, counter: newest.counter &+ 1, node: newest.node)
                let delete = WireChange(record: uri, entity: entity.name, kind: .delete, stamps: [WireChange.deleteStampKey: stamp.description])
                try applier.apply(LogEntry(position: 0, change: delete, schemaVersion: 0), db, into: &outcome)
            }
        }
    }

    /// The ids of an entity's records (URIs `prefix` + id) whose URIs lie after `lower` ("":
    /// from the start) and through `upper` (`nil`: to the end), in byte order: `nil` when
    /// none can; else the bounds on the id (`nil`: unbounded).
    ///
    /// ```swift
    /// SyncEngine.idRange(prefix: "tandem://d/B/", after: "tandem://d/A/9", through: "tandem://d/B/5")
    /// // (after: nil, through: "5")
    /// ```
    static func idRange(prefix: String, after lower: String, through upper: String?) -> (after: String?, through: String?)? {
        // Bytes throughout: the snapshot's order, and an entity name may be any letters.
        func precedes(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }
        func suffix(_ uri: String) -> String? {
            uri.utf8.starts(with: prefix.utf8) ? String(decoding: uri.utf8.dropFirst(prefix.utf8.count), as: UTF8.self) : nil
        }
        var after: String?
        if let id = suffix(lower) {
            after = id
        } else if !lower.isEmpty, !precedes(lower, prefix) {
            return nil  // every URI of the entity is before `lower`
        }
        var through: String?
        if let upper {
            if let id = suffix(upper) {
                through = id
            } else if precedes(upper, prefix) {
                return nil  // every URI of the entity is after `upper`
            }
        }
        return (after, through)
    }
}

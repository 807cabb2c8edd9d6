import Foundation
import GRDB
import Tandem
import TandemSchema
import TandemSQLite
import TandemWire

extension SyncEngine {
    /// Pulls pages after the saved cursor until the server has no more; each page is applied
    /// in one transaction (author `sync`) together with the new cursor.
    ///
    /// From a server with snapshots (feature `snapshot`), a store with no cursor first
    /// bootstraps from the dataset's snapshot (``bootstrap()``), and so does one whose
    /// cursor the server's compaction passed (410 `cursor_expired`): its unpushed edits stay
    /// (pushed before this pull, or kept over the snapshot as unpushed edits).
    func pull() async throws -> ChangeApplier.Outcome {
        var total = ChangeApplier.Outcome()
        try await checkReplay()
        let snapshots = capabilities?.features.contains("snapshot") ?? false
        if snapshots, try startBootstrapIfNeeded() { total.add(try await bootstrap()) }
        do {
            total.add(try await pullLog())
        } catch let error as SyncError where snapshots && error.serverCode == "cursor_expired" {
            logger.notice(
                "the server compacted the log past this store's cursor: bootstrapping again from the dataset's snapshot, keeping unpushed edits",
                metadata: ["server": "\(error.message)"])
            try restartBootstrap()
            total.add(try await bootstrap())
            total.add(try await pullLog())
        }
        return total
    }

    /// Pulls the log after the saved cursor (``pull()`` without snapshots).
    func pullLog() async throws -> ChangeApplier.Outcome {
        var total = ChangeApplier.Outcome()
        var first: (cursor: String, page: PullResponse)? = try await nextPage()
        // Nothing new (every idle sync of a daemon): nothing more is written, unless references
        // a pull cut after its last page (a crash, a failed write) left wait for their rules.
        if let first, first.page.changes.isEmpty, first.page.nextCursor == first.cursor {
            total.conflicts += try resolveDangling(with: try makeApplier(), caughtUpAt: first.cursor)
            configuration.progress?(.pulled(changes: 0, hasMore: false))
            return total
        }
        // Built once per pull; the unpushed local edits are read again only when a local
        // write happened since (a page's own writes are the sync's and do not count).
        var mark = try historyToken()
        var applier = try makeApplier()
        var caughtUp: String?
        // The next page is fetched and read while this one is applied (on another queue: the
        // engine's own is busy applying), from the cursor this page ends at.
        var ahead: Task<(cursor: String, page: PullResponse), any Error>?
        defer { ahead?.cancel() }
        while true {
            // A cancelled sync stops between pages (each page and its cursor are saved
            // together, so it stops at a page's end).
            try Task.checkCancellation()
            let fetched: (cursor: String, page: PullResponse)
            if let page = first {
                fetched = page
            } else if let next = ahead {
                ahead = nil
                fetched = try await next.valueCancellingWithCaller()
            } else {
                fetched = try await nextPage()
            }
            first = nil
            let (cursor, page) = fetched
            if page.hasMore, !page.changes.isEmpty {
                let after = page.nextCursor
                ahead = Task.detached { [limit = pageLimit] in try await self.page(after: after, limit: limit) }  // not on the engine, busy applying
            }
            if hasLocalChanges(after: mark) {
                mark = try historyToken()
                applier.pending = try pendingLocalStamps()
            }
            applier.now = loggedNow()
            let outcome = try store { db -> ChangeApplier.Outcome? in
                // Another process (the daemon and `tandem sync`) may have applied this page
                // meanwhile: apply only if the cursor is still the one the page follows.
                guard try SyncState.read(db)?.cursor ?? "" == cursor else { return nil }
                var outcome = ChangeApplier.Outcome()
                for entry in page.changes {
                    try applier.apply(entry, db, into: &outcome)
                }
                try SyncState.update(db) {
                    $0.cursor = page.nextCursor
                    if let last = page.changes.last?.position, last > $0.pulledThrough { $0.pulledThrough = last }
                    $0.replayCursor = ""  // the page's cursor holds the history now (``checkReplay()``)
                    if !page.hasMore || page.changes.isEmpty { $0.replayThrough = 0 }  // caught up: the replay is over
                }
                try SyncStore.saveDangling(outcome.dangling, db)  // with the cursor: a cut pull keeps them
                if let newest = outcome.newestStamp {
                    // Later local edits must be stamped after everything seen (HLC receive).
                    try ModelContainer.advanceClock(past: newest, in: db)
                }
                return outcome
            }
            guard let outcome else {
                ahead?.cancel()  // read from a cursor that has moved on
                ahead = nil
                continue
            }
            try resolve(outcome.resolutions)
            total.applied += outcome.applied
            total.conflicts += outcome.conflicts
            total.quarantined += outcome.quarantined
            configuration.progress?(.pulled(changes: total.applied, hasMore: page.hasMore))
            caughtUp = page.nextCursor
            if !page.hasMore || page.changes.isEmpty { break }
        }
        // Delete rules are decided only now, caught up: the log may still have pointed the
        // records elsewhere after the delete (a model save deletes a record before it
        // clears the references to it).
        total.conflicts += try resolveDangling(with: applier, caughtUpAt: caughtUp)
        return total
    }

    /// The enum cases a store whose schema lists none for an enum (not CaseIterable) can
    /// show: those every registered version it may be (`versions`, published from the
    /// sources) lists. Entity → column → cases.
    static func enumCases(of schema: Schema, in versions: [Schema]) -> [String: [String: EnumCases]] {
        // Each version's cases, as this store's schema filled from it, by stored entity name.
        let listed = versions.map { version in
            Dictionary(uniqueKeysWithValues: schema.fillingUnknowns(from: version).stored.entities.map { ($0.name, EnumCases.columns(of: $0)) })
        }
        guard let first = listed.first else { return [:] }
        var result: [String: [String: EnumCases]] = [:]
        for (entity, columns) in first {
            for (column, cases) in columns {
                var enumeration = cases.enumeration
                for other in listed.dropFirst() {
                    let rawValues = Set(other[entity]?[column]?.enumeration.cases?.map(\.rawValue) ?? [])
                    enumeration.cases = enumeration.cases?.filter { rawValues.contains($0.rawValue) }
                }
                if let shown = EnumCases(enumeration) { result[entity, default: [:]][column] = shown }
            }
        }
        return result
    }

    /// The configuration's conflict policies under the names pulled changes carry (a renamed
    /// model may be named by its class name).
    ///
    /// - Throws: ``SyncError/Code/misconfigured`` when one column is named twice (by its
    ///   model's class name and by its first name).
    func storedPolicies() throws -> [String: ConflictPolicy] {
        let declared = container.declaredSchema
        var policies: [String: (key: String, policy: ConflictPolicy)] = [:]
        for (key, policy) in configuration.conflictPolicies {
            let stored = key.firstIndex(of: ".").map { declared.storedEntityName(String(key[..<$0])) + key[$0...] } ?? declared.storedEntityName(key)
            if let other = policies.updateValue((key, policy), forKey: stored) {
                throw SyncError(
                    .misconfigured,
                    "conflictPolicies names one column twice, as '\(min(other.key, key))' and '\(max(other.key, key))' (a renamed model's class name and its first name): keep one")
            }
        }
        return policies.mapValues(\.policy)
    }

    /// An applier of pulled changes with this engine's rules and the store's unpushed edits.
    func makeApplier() throws -> ChangeApplier {
        let node = container.hlcNode
        var applier = ChangeApplier(schema: container.schema, dataset: container.dataset, now: loggedNow(), pending: try pendingLocalStamps())
        applier.remoteWins = remoteWins
        applier.appliesDeleteRules = appliesDeleteRules
        applier.policies = try storedPolicies()
        applier.updateWinsOverDelete = Set(configuration.updateWinsOverDelete.map(container.declaredSchema.storedEntityName))
        applier.node = node
        applier.merges.any = try read { db in try SyncStore.count("tandem_sync_merged", db) > 0 }
        applier.merges.ever = try applier.merges.any || read { db in try SyncState.read(db)?.everMerged ?? false }
        applier.keptAny.value = try read { db in try SyncStore.keptCount(db) > 0 }
        applier.keepsUnknownValues = keepsUnknownValues
        applier.enumCases.merge(publishedEnumCases) { _, published in published }
        applier.replayThrough = try read { db in try SyncState.read(db)?.replayThrough ?? 0 }
        return applier
    }

    /// The page after the saved cursor, with that cursor: the one a waiting pull brought
    /// (``prefetchedPage``) when it follows that cursor.
    private func nextPage() async throws -> (cursor: String, page: PullResponse) {
        let cursor = try read { db in try SyncState.read(db)?.cursor } ?? ""
        if let ready = prefetchedPage {
            prefetchedPage = nil
            if ready.cursor == cursor { return ready }
        }
        return try await page(after: cursor, limit: pageLimit)
    }

    /// Changes per page asked for: the configured size, within the server's maximum.
    var pageLimit: Int {
        max(min(configuration.pullPageSize, capabilities?.maxPageSize ?? .max), 1)
    }

    /// The page after `cursor`, read on ``pageReader`` rather than the engine's queue;
    /// with `wait`, the server holds the answer up to that many seconds for a change to
    /// arrive (live sync).
    nonisolated func page(after cursor: String, limit: Int, wait: Int? = nil) async throws -> (cursor: String, page: PullResponse) {
        let response = try await call(
            "GET", "/v1/datasets/\(dataset)/pull?after=\(cursor)&limit=\(limit)\(wait.map { "&wait=\($0)" } ?? "")", headers: pendingHeader)
        return (cursor, try await Self.readPage(response.body))
    }

    /// `Tandem-Pending` once this sync counted its pending changes.
    nonisolated var pendingHeader: [String: String] {
        reportedPending.withLock { $0 }.map { ["Tandem-Pending": String($0)] } ?? [:]
    }

    /// Reads pull answers while the engine's queue applies the page before.
    private static let pageReader = DispatchQueue(label: "tandem.sync.pages")

    private static func readPage(_ body: Data) async throws -> PullResponse {
        try await withCheckedThrowingContinuation { continuation in
            pageReader.async {
                continuation.resume(
                    with: Result {
                        do { return try WireJSONReader.pullResponse(body) } catch {
                            throw SyncError(.invalidResponse, "the server's pull answer is unreadable: \(error)")
                        }
                    })
            }
        }
    }

    /// Writes what conflict policies decided as new local edits (author `sync.resolve`, so
    /// they are pushed): fresh stamps, newer than both sides.
    func resolve(_ resolutions: [ChangeApplier.Resolution]) throws {
        guard !resolutions.isEmpty else { return }
        do {
            try container.write(author: "sync.resolve") { db in
                for resolution in resolutions {
                    let table = SQLName.quote(resolution.entity)
                    let names = resolution.values.keys.sorted()
                    let arguments = names.map { resolution.values[$0]! }
                    // One at a time: a value carried over by a merge may collide with a third
                    // record's unique value; that one is skipped (and said), not the others.
                    do {
                        try db.inSavepoint {
                            if resolution.reinsert {
                                // Bound straight to SQLite: text whole, a NUL inside included.
                                try db.makeStatement(
                                    sql: "INSERT OR IGNORE INTO \(table) (\"#id\"\(names.map { ", " + SQLName.quote($0) }.joined())) VALUES (?\(String(repeating: ", ?", count: names.count)))"
                                ).executeBound { bind in
                                    bind.text(resolution.uuid)
                                    for value in arguments { bind.value(value) }
                                }
                            } else if let stamps = resolution.stamps {
                                // The values' own stamps, written with them (the journal keeps
                                // them, so the push carries them), and only over older ones: a
                                // value pulled meanwhile that is newer stays.
                                let current = try String.fetchOne(db, sql: "SELECT \"#hlc\" FROM \(table) WHERE \"#id\" = ?", arguments: [resolution.uuid])
                                var merged = current.flatMap(ChangeApplier.stamps) ?? [:]
                                let newer = names.filter { name in stamps[name].map { $0 > (merged[name] ?? merged["*"] ?? .zero) } ?? false }
                                guard !newer.isEmpty else { return .commit }
                                for name in newer { merged[name] = stamps[name] }
                                try db.makeStatement(
                                    sql: "UPDATE \(table) SET \(newer.map { SQLName.quote($0) + " = ?" }.joined(separator: ", ")), \"#hlc\" = ? WHERE \"#id\" = ?"
                                ).executeBound { bind in
                                    for name in newer { bind.value(resolution.values[name]!) }
                                    bind.text(ChangeApplier.json(merged.mapValues(\.description)))
                                    bind.text(resolution.uuid)
                                }
                            } else {
                                try db.makeStatement(sql: "UPDATE \(table) SET \(names.map { SQLName.quote($0) + " = ?" }.joined(separator: ", ")) WHERE \"#id\" = ?")
                                    .executeBound { bind in
                                        for value in arguments { bind.value(value) }
                                        bind.text(resolution.uuid)
                                    }
                            }
                            return .commit
                        }
                    } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
                        logger.warning("a resolved value could not be written", metadata: ["record": "\(resolution.entity)/\(resolution.uuid)", "error": "\(error.message ?? "")"])
                    }
                }
            }
        } catch {
            throw SyncError(.store, "the store failed: \(error)")
        }
    }

    func historyToken() throws -> HistoryToken {
        do { return try container.currentHistoryToken() } catch { throw SyncError(.store, "the store failed: \(error)") }
    }

    /// The column stamps of local changes not pushed yet (`*`: deleted), per record URI:
    /// the journal's, and those waiting in the quarantine (the server refused them; they are
    /// sent again, so a pulled value against one is a conflict like any other).
    func pendingLocalStamps() throws -> [String: [String: HLCTimestamp]] {
        let transactions: [HistoryTransaction]
        do { transactions = try container.fetchHistory(container.unpushedHistory()) } catch let error as SyncError { throw error } catch { throw SyncError(.store, "the store failed: \(error)") }
        var pending: [String: [String: HLCTimestamp]] = [:]
        // Under this store's column names: an edit journaled before a local rename (or kept
        // under the wire name) names the column otherwise, and pulled changes arrive under
        // the current name.
        let naming = self.naming
        func local(_ column: String, of entity: String) -> String {
            naming.isIdentity ? column : naming.localColumn(naming.wireColumn(column, of: entity), of: entity)
        }
        for entry in try read({ db in try SyncStore.quarantined(pulled: false, db) }) {
            guard let change = entry.wireChange else { continue }
            let stamps = change.stamps.compactMapValues { HLCTimestamp($0) }
            if change.kind == .delete {
                pending[change.record] = ["*": stamps["*"] ?? .zero]
            } else if let field = change.linkField {
                pending[change.record, default: [:]][field] = stamps["*"] ?? stamps.values.first
            } else {
                for column in change.values.keys { pending[change.record, default: [:]][local(column, of: change.entity)] = stamps[column] ?? stamps["*"] }
            }
        }
        for transaction in transactions {
            for change in transaction.changes {
                let uri = change.persistentModelID.description
                switch change.kind {
                case .insert, .update:
                    pending[uri, default: [:]]["*"] = nil
                    for column in change.values.keys { pending[uri, default: [:]][local(column, of: change.entityName)] = change.stamp(of: column) }
                case .delete:
                    pending[uri] = ["*": change.stamp]
                case .link, .unlink:
                    // The link's own field (see WireChange.linkField).
                    guard let (relationship, member) = change.values.first, case .text(let id) = member else { continue }
                    pending[uri, default: [:]][relationship + "#" + id] = change.stamp
                }
            }
        }
        return pending
    }
}

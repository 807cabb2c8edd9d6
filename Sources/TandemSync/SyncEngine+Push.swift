import Foundation
import GRDB
import Tandem
import TandemSchema
import TandemWire
import TandemConflicts

extension SyncEngine {
    struct PushResult {
        var pushed = 0
        var conflicts = 0
        /// Local changes the server refused, kept in the quarantine with its reason.
        var quarantined = 0
        /// Batches whose own log entries the pull may skip (see ``SyncEngine/skipEchoes(_:since:_:)``).
        var echoes: [Echo] = []
        /// Batches whose log entries were skipped instead of pulled back.
        var echoesSkipped = 0
        /// A resync whose push of the store's records the server refused for the user's role
        /// or token: it pulled only (``SyncSummary/resyncPushRefused``).
        var resyncPushRefused = false
        /// Values that lost at the server, and changes it refused, not written yet: they are
        /// written with the progress that passes their batch (``save(_:_:)``), so a batch
        /// sent again after a lost answer beside it does not log them twice.
        var lostValues: [SyncConflict] = []
        /// The server's values that won over pushed ones, written over them where the row
        /// still holds what was pushed (``save(_:_:)``).
        var winners: [ServerWinner] = []
        /// Pushed links the server answered lost to a delete: their rows go (``save(_:_:)``).
        var lostLinks: [LostLink] = []
        var refused: [(change: String, record: String, reason: String, at: Int64)] = []
        /// Records whose insert is among `refused`: links to them wait with them.
        var refusedInserts: Set<String> = []
        /// Deletes the server took: what this store kept of their records for a newer schema
        /// (stamped before them) goes with them (``save(_:_:)``).
        var deletes: [(record: String, stamp: HLCTimestamp)] = []

        mutating func add(_ other: PushResult) {
            pushed += other.pushed
            conflicts += other.conflicts
            quarantined += other.quarantined
            echoes += other.echoes
            echoesSkipped += other.echoesSkipped
            lostValues += other.lostValues
            winners += other.winners
            lostLinks += other.lostLinks
            refused += other.refused
            refusedInserts.formUnion(other.refusedInserts)
            deletes += other.deletes
            resyncPushRefused = resyncPushRefused || other.resyncPushRefused
        }

        /// Writes the lost values and refused changes, and forgets them; takes the server's
        /// winning values into rows that still hold the ones that lost.
        mutating func save(_ db: Database) throws {
            // One logged already (the same two writes: a resync's push of a value the
            // journal's push lost before) is not counted again.
            for conflict in lostValues {
                if try !SyncStore.recordConflict(conflict, db) { conflicts -= 1 }
            }
            for winner in winners { try winner.adopt(db) }
            for link in lostLinks { try link.drop(db) }
            winners = []
            lostLinks = []
            for refusal in refused {
                try SyncStore.quarantine(refusal.change, position: nil, reason: refusal.reason, at: refusal.at, record: refusal.record, db)
            }
            lostValues = []
            refused = []
            if !deletes.isEmpty, try SyncStore.keptCount(db) > 0 {
                for delete in deletes { try SyncStore.forgetKept(record: delete.record, through: delete.stamp, db) }
            }
            deletes = []
        }
    }

    /// Pushes one batch and logs the values that lost. A batch the server refuses as invalid
    /// or too large is split in two (each half with its own key, derived from the batch's);
    /// a single change it refuses is quarantined with the server's reason instead of
    /// blocking every later sync. The local row keeps its value.
    ///
    /// The answer lists only the outcomes of changes that lost a value or were not applied
    /// (``PushRequest/OutcomeDetail/lost``).
    ///
    /// A resync's push of the store's records is refused as a whole for a user who may not
    /// push (`quarantineRoleRefusals` false): its records came from the server, they are not
    /// this user's edits to keep in the quarantine.
    func send(
        _ pushed: PushPlanner.Batch, key: String, schemaVersion: Int, resync: Bool = false, quarantineRoleRefusals: Bool = true
    ) async throws -> PushResult {
        let batch = pushed.changes
        // A resync's push says so to a server that knows it (its inserts may be of records
        // deleted long ago, whose tombstones the server pruned).
        let resync = resync && capabilities?.features.contains("snapshot") == true
        // Renamed attributes travel under their first name (`WireNaming`).
        let body =
            naming.isIdentity
            ? pushed.body(schemaVersion: schemaVersion, resync: resync)
            : PushPlanner.Batch(batch.map(naming.toWire)).body(schemaVersion: schemaVersion, resync: resync)
        // The store's cursor names the dataset it is a replica of: a server that knows the
        // header refuses the push when it is another's (a sync with the wrong dataset or
        // server), before its edits are taken there and counted as pushed.
        let state = try read { db in try SyncState.read(db) }  // once per batch: the cursor, and whose resync
        var headers = ["Idempotency-Key": key]
        if capabilities?.features.contains("pushCursor") == true, let cursor = state?.cursor, !cursor.isEmpty {
            headers["Tandem-Cursor"] = cursor
        }
        let response: TransportResponse
        do {
            response = try await call("POST", "/v1/datasets/\(dataset)/push", body: body, headers: headers)
        } catch let error as SyncError where error.serverCode == "role_too_low" || error.serverCode == "read_only_token" {
            guard quarantineRoleRefusals else { throw error }
            // A member who may only read (a shared dataset), or a read-only token: their
            // local changes cannot be pushed; they wait in the quarantine (retried if the role
            // or the token changes, or dropped), and the pull goes on.
            logger.warning("this user may not push to the dataset; local changes quarantined", metadata: ["changes": "\(batch.count)"])
            return PushResult(
                quarantined: batch.count,
                refused: batch.map { change in
                    (
                        WireJSON.data { $0.append(change) }.utf8Text, change.record,
                        error.serverCode == "read_only_token"
                            ? "the server refused this local change: the token is read-only (\(error.message))"
                            : "the server refused this local change: your role in the dataset does not allow pushing (\(error.message))", loggedNow()
                    )
                },
                refusedInserts: Set(batch.filter { $0.kind == .insert }.map(\.record)))
        } catch let error as SyncError where error.code == .rejected && [400, 413, 422].contains(error.status ?? 0) && error.serverCode != "invalid_cursor" {
            // (A cursor the server cannot read is the store's, not a change's: the sync stops.)
            guard batch.count > 1 else {
                logger.warning("the server refused a local change; quarantined", metadata: ["record": "\(batch[0].record)", "error": "\(error.message)"])
                return PushResult(
                    quarantined: 1,
                    refused: [
                        (
                            WireJSON.data { $0.append(batch[0]) }.utf8Text, batch[0].record,
                            "the server refused this local change: \(error.message)", loggedNow()
                        )
                    ],
                    refusedInserts: batch[0].kind == .insert ? [batch[0].record] : [])
            }
            let half = batch.count / 2
            if error.serverCode == "batch_too_large" {
                // A server with a lower cap: later ranges are cut to fit it (its cap, which
                // its message names, or half the refused batch).
                let cap = PushRequest.cap(inTooManyChangesMessage: error.message).map { min($0, batch.count - 1) } ?? half
                if cap >= 1, cap < batchLimit ?? configuration.pushBatchSize {
                    logger.notice("the server takes fewer changes per push than pushBatchSize; later batches are smaller", metadata: ["changes": "\(cap)"])
                    batchLimit = cap
                }
            }
            var result = try await send(
                PushPlanner.Batch(Array(batch[..<half])), key: key + ".a", schemaVersion: schemaVersion, resync: resync,
                quarantineRoleRefusals: quarantineRoleRefusals)
            // Changes of an insert the first half had refused (its links too) wait with it.
            let (rest, held) = try holdChangesOfRefusedInserts(PushPlanner.Batch(Array(batch[half...])), refused: result.refusedInserts)
            result.add(held)
            if !rest.changes.isEmpty {
                let restKey = key + ".b" + (held.refused.isEmpty ? "" : ".h" + Self.fingerprint(held.refused.map(\.change)))
                result.add(try await send(rest, key: restKey, schemaVersion: schemaVersion, resync: resync, quarantineRoleRefusals: quarantineRoleRefusals))
            }
            return result
        }
        let answer: PushResponse
        do { answer = try WireJSONReader.pushResponse(response.body) } catch {
            throw SyncError(.invalidResponse, "the server's push answer is unreadable: \(error)")
        }
        guard let outcomes = answer.indexedOutcomes(count: batch.count) else {
            throw SyncError(
                .invalidResponse, "the server's push answer does not fit the \(batch.count) changes pushed (\(answer.outcomes.count) outcomes\(answer.changeCount.map { " for \($0) changes" } ?? ""))")
        }
        let now = loggedNow()
        // A requested resync's only: after a restore, the replica that wrote a value the
        // server lost may be gone, and the value's loss is logged here or nowhere.
        let requestedResync = resync && state?.resyncRequested == true
        var lost: [SyncConflict] = []
        var winners: [ServerWinner] = []
        var lostLinks: [LostLink] = []
        for (index, outcome) in outcomes {
            let change = batch[index]
            for var value in outcome.lost {
                value.attribute = naming.localColumn(value.attribute, of: change.entity)
                let rule: ConflictRule = change.kind == .delete ? .insertAfterDelete : (value.toDelete ? .deleteWins : .lastWriterWins)
                if rule == .lastWriterWins, let winner = ServerWinner(record: change.record, entity: change.entity, lost: value, schema: container.schema) { winners.append(winner) }
                if let link = LostLink(change: change, lost: value, schema: container.schema) { lostLinks.append(link) }
                // A requested resync pushes every value the store holds: one another replica
                // wrote, losing to a newer one, is no conflict of this store's (its writer
                // logs its own); the rows still take the winner.
                if requestedResync, let stamp = HLCTimestamp(value.stamp), stamp.node != container.hlcNode { continue }
                lost.append(
                    SyncConflict(
                        at: now, record: change.record, attribute: value.attribute,
                        localValue: value.value.jsonText, localStamp: value.stamp,
                        remoteValue: value.winningValue.jsonText, remoteStamp: value.winningStamp,
                        winner: .server, rule: rule.rawValue))
            }
        }
        let deletes = batch.compactMap { change in
            change.kind == .delete ? change.stamps[WireChange.deleteStampKey].flatMap(HLCTimestamp.init).map { (change.record, $0) } : nil
        }
        return PushResult(
            pushed: batch.count, conflicts: lost.count, echoes: echo(of: batch, answer: answer).map { [$0] } ?? [],
            lostValues: lost, winners: winners, lostLinks: lostLinks, deletes: deletes)
    }

    /// Pushes every journaled local change after the `sync` reader's acknowledged token, in
    /// ranges of at most `pushRangeChanges` changes split into batches. A range can end
    /// inside a transaction (a bulk import of a million rows is read a slice at a time, so
    /// memory follows the range, not the transaction). A range's bounds are saved before
    /// its first batch is sent, so a retry (after a crash or a lost answer) sends the same
    /// batches with the same idempotency keys. After its last batch, the journal is
    /// acknowledged through the last transaction the range finished, and `pushedChange`
    /// remembers how far into the next one it got.
    func push(schemaVersion: Int) async throws -> PushResult {
        var result = try await pushSnapshotIfNeeded(schemaVersion: schemaVersion)
        let clientID = try read { db in try SyncState.read(db)?.clientID } ?? "client"
        // The next range is read and cut while this one is sent (off the engine's queue), from
        // where this one will leave the journal's acknowledgement; it is used only if the
        // store is there when this one is done.
        var ahead: Task<PreparedRange, any Error>?
        defer { ahead?.cancel() }
        while true {
            let acknowledged = try container.syncAcknowledged()
            let prepared: PreparedRange
            // A read-ahead that failed or found nothing is read again (a change committed
            // since is pushed now, not at the next sync).
            // One cut to a batch size the server has refused since is read again too.
            if let next = try? await ahead?.value, let range = next.range, next.acknowledged == acknowledged, range.shape == batchShape,
                try read({ db in try InFlightRange.fetchOne(db) }) == nil,
                try container.syncPushedChange(acknowledged: acknowledged) == next.afterChange
            {
                try store { db in try range.saved(nextBatch: 0).save(db) }
                prepared = next
            } else {
                guard let range = try nextRange(after: acknowledged) else { return result }
                prepared = prepare(range, acknowledged: acknowledged)
            }
            ahead = nil
            guard let range = prepared.range else { return result }
            // Where this range leaves the acknowledgement and `pushedChange` once sent.
            let newAcknowledged = max(range.finishedThrough ?? acknowledged, acknowledged)
            let nextAfter = range.lastToken > newAcknowledged ? range.throughChange : 0
            // Ranges grow from the first one's few batches (sent at once, without waiting for
            // a large read) to `pushRangeChanges`, doubling: each is read in less time than
            // the one before takes to send.
            let nextLimit = min(rangeLimit, max(2 * range.changeCount, firstRangeLimit))
            let shape = batchShape
            ahead = Task.detached { [self] in
                try Task.checkCancellation()
                return try await withCheckedThrowingContinuation { continuation in
                    Self.rangeReader.async {
                        continuation.resume(
                            with: Result {
                                self.prepare(
                                    try self.fetchRange(after: newAcknowledged, afterChange: nextAfter, through: nil, limit: nextLimit, shape: shape),
                                    acknowledged: newAcknowledged)
                            })
                    }
                }
            }
            result.add(try await sendBatches(of: prepared, range, clientID: clientID, schemaVersion: schemaVersion))
            // Saved under the acknowledged token it will be valid for; a crash before the
            // acknowledgement below only makes it stale (the range is sent again).
            try store { db in
                try PushedChange(acknowledged: newAcknowledged.rawValue, token: range.lastToken.rawValue, changeID: range.throughChange).save(db)
                try InFlightRange.clear(db)
            }
            if let finished = range.finishedThrough, finished > acknowledged {
                do {
                    try container.acknowledgeHistory(through: finished, reader: SyncStore.reader)
                } catch {
                    throw SyncError(.store, "the store failed: \(error)")
                }
            }
        }
    }

    /// Sends the batches of `prepared` (its range saved as in flight) from the first one not
    /// answered, up to `pushesInFlight` at once in a sliding window, and saves the progress
    /// as answers come in, in batch order. Returns what the answers said.
    private func sendBatches(of prepared: PreparedRange, _ range: Range, clientID: String, schemaVersion: Int) async throws -> PushResult {
        let (plan, batches) = (prepared.plan, prepared.batches)
        var total = PushResult()
        var sent = batches.prefix(range.chunk).reduce(0) { $0 + $1.changes.count }
        // Up to `pushesInFlight` batches at once (each holds whole records, so they never
        // overlap), in a sliding window: while the server writes one batch it reads the
        // next. The saved batch index moves only past batches answered in order, so a
        // retry resends from the first unanswered one with the same keys.
        let inFlight = window(for: prepared)
        let uniqueEntities = Set(uniqueColumns.keys)
        let mergedAway = try remakesMergedAwayRecords(plan, uniqueEntities: uniqueEntities)
        try await withThrowingTaskGroup(of: (Int, PushResult).self) { group in
            var next = range.chunk
            var answeredThrough = range.chunk
            var waiting: [Int: PushResult] = [:]
            var unmatchedEchoes: [Echo] = []
            func start(_ position: Int) throws {
                var key = range.key(clientID: clientID, schemaVersion: schemaVersion, index: position)
                var batch = batches[position]
                // Changes of a record whose insert the server refused wait with it, and so
                // do links naming one. The batch is then another push, with a key of its
                // own: a retry after the insert got through sends the whole batch under
                // the range's key.
                var held: PushResult
                (batch, held) = try holdChangesOfRefusedInserts(batch)
                if !held.refused.isEmpty { key += ".h" + Self.fingerprint(held.refused.map(\.change)) }
                guard !batch.changes.isEmpty else { return group.addTask { (position, held) } }
                group.addTask {
                    var result = try await self.send(batch, key: key, schemaVersion: schemaVersion)
                    result.add(held)
                    return (position, result)
                }
            }
            // A batch holding links goes once every batch before it is answered: a plan
            // sends links after every record change, and the server refuses a link to a
            // record it does not have yet (an insert still in flight).
            func mayStart(_ index: Int) -> Bool {
                index < batches.count && index < answeredThrough + inFlight
                    && (index == answeredThrough || !batches[index].changes.contains { $0.kind.isLink })
            }
            while mayStart(next) {
                try start(next)
                next += 1
            }
            while let (position, outcome) = try await group.next() {
                waiting[position] = outcome
                var answered = PushResult()
                let from = answeredThrough
                while let outcome = waiting.removeValue(forKey: answeredThrough) {
                    answered.add(outcome)
                    answeredThrough += 1
                }
                if answeredThrough > from {
                    unmatchedEchoes = try save(
                        &answered, of: batches[from..<answeredThrough], range, echoes: unmatchedEchoes,
                        unmerging: mergedAway ? uniqueEntities : nil)
                    total.add(answered)
                    sent += batches[from..<answeredThrough].reduce(0) { $0 + $1.changes.count }
                    configuration.progress?(.pushed(changes: sent, of: plan.changes.count))
                }
                while mayStart(next) {
                    try start(next)
                    next += 1
                }
            }
        }
        return total
    }

    /// How many batches of `prepared` may be in flight at once: `pushesInFlight`, or one when
    /// the range can free a unique value. The server may log batches in flight in any order,
    /// and a value freed in one batch and taken in the next must reach other replicas in that
    /// order, or they would merge two records (docs/sync.md). Only a delete of such a record,
    /// or an update of a unique column, frees one: inserts alone (a bulk import of a seed
    /// model with a unique attribute) go at full speed.
    private func window(for prepared: PreparedRange) -> Int {
        prepared.freesUniqueValues ? 1 : max(configuration.pushesInFlight, 1)
    }

    /// Whether `plan` may make again records this store merged away: the server takes such
    /// an insert (newer than the merge) as a record of its own again, and so must this store
    /// once it is sent, or it would still send later changes of it to the survivor. Read only
    /// when the plan inserts records of entities with unique values.
    private func remakesMergedAwayRecords(_ plan: PushPlanner.Plan, uniqueEntities: Set<String>) throws -> Bool {
        guard plan.changes.contains(where: { $0.kind == .insert && uniqueEntities.contains($0.entity) }) else { return false }
        return try read { db in try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM tandem_sync_merged)") } ?? false
    }

    /// Saves the answers of `sent`, batches answered in order, in one store transaction: what
    /// they said, the records a re-insert made its own again (`unmerging`, the entities with
    /// unique values, when the range remakes merged-away records), the range's next batch, and
    /// the echoes skipped. Returns the echoes not matched yet (`echoes` and the answers').
    private func save(
        _ answered: inout PushResult, of sent: ArraySlice<PushPlanner.Batch>, _ range: Range, echoes: [Echo],
        unmerging uniqueEntities: Set<String>?
    ) throws -> [Echo] {
        let checkingPulledChanges = echoSkipChecksPulledChanges
        let echoes = echoes + answered.echoes
        var outcome = answered
        let (skipped, unmatched) = try store { db in
            try outcome.save(db)
            if let uniqueEntities { try Self.unmergeReinserted(sent.flatMap(\.changes), uniqueEntities: uniqueEntities, db) }
            try range.saved(nextBatch: sent.endIndex).save(db)
            return try Self.skipEchoes(echoes, since: range.firstToken, checkingPulledChanges: checkingPulledChanges, db)
        }
        answered = outcome
        answered.echoes = []
        answered.echoesSkipped = skipped
        return unmatched
    }

    /// With nothing local left to push, moves the `sync` reader past the pulled transactions
    /// after it (author `sync`), so later syncs do not read them again: a store that only
    /// pulls would otherwise scan its whole pulled history on every sync.
    ///
    /// The newest token and the check for local transactions are read in one snapshot: a
    /// local write committed after it has a newer token and stays unacknowledged.
    func acknowledgePulled(after acknowledged: HistoryToken) throws {
        guard let newest = try read({ db in try SyncJournal.newestTransaction(after: acknowledged, allBy: SyncStore.author, db) }) else { return }
        do {
            try container.acknowledgeHistory(through: newest, reader: SyncStore.reader)
        } catch {
            throw SyncError(.store, "the store failed: \(error)")
        }
    }

    /// On the first sync, rows the journal has no insert for (history deleted before sync was
    /// set up) are pushed as inserts with their stored stamps, so no record stays behind.
    /// During a resync (``SyncState/resync``), every row, and every value kept for a newer
    /// schema: the server's data may lack any of them.
    func pushSnapshotIfNeeded(schemaVersion: Int) async throws -> PushResult {
        var result = PushResult()
        guard let state = try read({ db in try SyncState.read(db) }), !state.snapshotPushed else { return result }
        let all = !state.resync.isEmpty
        // A store journaled since its creation, with all its history, has nothing to add: the
        // scan below reads every row (50 ms per 100 k rows) to find none.
        if !all, try read({ db in try ModelContainer.journalHoldsEveryInsert(db) }) {
            try store { db in try SyncState.update(db) { $0.snapshotPushed = true } }
            return result
        }
        let keyPrefix = all ? "\(state.clientID):resync-\(state.resync)" : state.clientID
        var readerResync = false
        // Read and sent a slice at a time (ids in order), so a large store is never held
        // in memory whole.
        let slice = min(max(configuration.pushBatchSize, 1), 100_000) * 10
        for entity in container.schema.entities {
            let columns = entity.columns.filter { $0.role != .primaryKey }.map(\.name)
            var after = ""
            var index = 0
            while true {
                let (changes, lastID): ([WireChange], String?) = try read { db in
                    let rows = try SyncJournal.rowsWithoutJournaledInsert(entity: entity.name, columns: columns, after: after, limit: slice, all: all, db)
                    var changes: [WireChange] = []
                    var lastID: String?
                    while let row = try rows.next() {
                        let id: String = row[0]
                        let stamps = (row[1] as String?).flatMap(ChangeApplier.stamps) ?? [:]
                        var values: [String: WireValue] = [:]
                        var columnStamps: [String: String] = [:]
                        for (index, column) in columns.enumerated() {
                            values[column] = row.wireValue(at: index + 2)
                            columnStamps[column] = (stamps[column] ?? stamps["*"] ?? .zero).description
                        }
                        changes.append(
                            WireChange(
                                record: "tandem://\(container.dataset)/\(entity.name)/\(id)", entity: entity.name, kind: .insert,
                                values: values, stamps: columnStamps
                            ).compacted())
                        lastID = id
                    }
                    return (changes, lastID)
                }
                guard let lastID else { break }
                after = lastID  // the stored id, whatever its case: the next slice starts after it
                logger.info(
                    all ? "pushing the store's records again (resync)" : "pushing records the journal has no history for",
                    metadata: ["entity": "\(entity.name)", "records": "\(changes.count)"])
                let shape = batchShape
                for batch in PushPlanner.chunks(changes, count: shape.count, bytes: shape.bytes) {
                    var outcome: PushResult
                    do {
                        outcome = try await send(
                            batch, key: "\(keyPrefix):v\(schemaVersion):snapshot:\(entity.name):\(index)/\(shape.count)", schemaVersion: schemaVersion,
                            resync: all, quarantineRoleRefusals: !all)
                    } catch let error as SyncError where all && (error.serverCode == "role_too_low" || error.serverCode == "read_only_token") {
                        // A reader (or a read-only token) cannot put the store's records back on
                        // the server: the resync only pulls. Its own unpushed edits still go
                        // through the journal's push, and wait in the quarantine as in any sync.
                        // Said in the summary: a writer on a read-only token who meant to put
                        // records back runs `tandem resync` again with a token that may push.
                        logger.notice(
                            "the server refused the store's records for this user's role or token: the resync pulls only",
                            metadata: ["reason": "\(error.message)"])
                        readerResync = true
                        result.resyncPushRefused = true
                        break
                    }
                    try store { db in try outcome.save(db) }
                    index += 1
                    result.add(outcome)
                }
                if readerResync || changes.count < slice { break }
            }
            if readerResync { break }
        }
        // What this store keeps for a newer schema is part of what it holds.
        if all && !readerResync { result.add(try await pushKeptAgain(keyPrefix: keyPrefix)) }
        try store { db in
            try SyncState.update(db) {
                $0.snapshotPushed = true
                $0.resync = ""
                $0.resyncRequested = false
            }
        }
        result.echoes = []  // rows without history: their echoes are pulled back
        return result
    }

    /// Local changes to push in one go: the non-`sync` changes with ids in
    /// `(afterChange, throughChange]` of the transactions after `acknowledged`, grouped by
    /// transaction.
    ///
    /// Change ids are compared only among transactions not acknowledged yet (history
    /// deletion keeps those, so their ids are never reused), and the idempotency keys name
    /// the transactions' tokens too (tokens are never reused, change ids can be once history
    /// is deleted).
    struct Range: Sendable {
        var acknowledged: HistoryToken
        var afterChange: Int64
        var throughChange: Int64
        /// The transactions of the range's first and last change.
        var firstToken: HistoryToken
        var lastToken: HistoryToken
        /// The first batch not yet answered.
        var chunk: Int
        var transactions: [HistoryTransaction]
        /// The last transaction whose every change is in this range or before it, once the
        /// range is pushed (`nil` when the range is one slice of a larger transaction).
        var finishedThrough: HistoryToken?
        /// How the range is cut into batches: saved with it, so a range resumed after a
        /// crash or a lost answer is cut as it was (`chunk` counts those batches), whatever
        /// the batch size configured since.
        var shape: BatchShape

        /// How many changes the range holds.
        var changeCount: Int { transactions.reduce(0) { $0 + $1.changes.count } }

        /// The idempotency key of batch `index`, naming the batch size (the same range cut
        /// otherwise is other batches).
        func key(clientID: String, schemaVersion: Int, index: Int) -> String {
            "\(clientID):v\(schemaVersion):t\(firstToken.rawValue).\(afterChange)-t\(lastToken.rawValue).\(throughChange):\(index)/\(shape.count)"
        }

        /// The range as saved while it is sent, with its first batch not answered yet.
        func saved(nextBatch: Int) -> InFlightRange {
            InFlightRange(
                acknowledged: acknowledged.rawValue, afterChange: afterChange, throughChange: throughChange,
                nextBatch: nextBatch, batchChanges: shape.count, batchBytes: shape.bytes)
        }
    }

    /// The most changes and JSON bytes of one batch.
    struct BatchShape: Sendable, Hashable {
        var count: Int
        var bytes: Int
    }

    /// The batch shape new ranges are cut with: the configured one, within the server's
    /// limits (its capabilities, and ``batchLimit`` once it refused a batch as too large).
    /// The body's envelope around the changes takes well under 1 KiB of the server's limit.
    var batchShape: BatchShape {
        let count = min(configuration.pushBatchSize, batchLimit ?? .max, capabilities?.maxChangesPerPush ?? .max)
        let bytes = min(configuration.pushBatchBytes, (capabilities?.maxBodyBytes).map { $0 - 1024 } ?? .max)
        return BatchShape(count: max(count, 1), bytes: max(bytes, 1))
    }

    /// Reads and cuts the next push range (blocking SQLite and JSON work, kept off both the
    /// engine's queue and Swift's cooperative pool).
    private static let rangeReader = DispatchQueue(label: "tandem.sync.ranges")

    /// Forgets the merges of records `changes` insert again after them (see
    /// ``SyncStore/unmerge(entity:loser:_:)``).
    nonisolated static func unmergeReinserted(_ changes: [WireChange], uniqueEntities: Set<String>, _ db: Database) throws {
        for change in changes where change.kind == .insert && uniqueEntities.contains(change.entity) {
            guard let id = RecordURI(change.record)?.id, let merged = try SyncStore.mergeStamp(entity: change.entity, loser: id, db),
                let newest = change.stamps.values.compactMap(HLCTimestamp.init).max(), newest > merged
            else { continue }
            try SyncStore.unmerge(entity: change.entity, loser: id, db)
        }
    }

    /// Entity → the columns of its unique attributes (for the entities that have one).
    nonisolated var uniqueColumns: [String: Set<String>] {
        var result: [String: Set<String>] = [:]
        for entity in container.schema.entities {
            let columns = Set(entity.attributes.filter(\.isUnique).flatMap(\.columns).map(\.name))
            if !columns.isEmpty { result[entity.name] = columns }
        }
        return result
    }

    /// Whether `changes` may free a unique value (a delete of a record with one, or an update
    /// of a unique column): their batches then go one at a time, in order.
    nonisolated func freesUniqueValues(_ changes: [WireChange], uniqueColumns unique: [String: Set<String>]) -> Bool {
        guard !unique.isEmpty else { return false }
        return changes.contains { change in
            guard let columns = unique[change.entity] else { return false }
            switch change.kind {
            case .delete: return true
            case .update: return change.values.keys.contains(where: columns.contains)
            case .insert, .link, .unlink: return false
            }
        }
    }

    /// A range with its plan and batches, and the acknowledged token and change it was read
    /// after (`range` is `nil` when there was nothing to push).
    struct PreparedRange: Sendable {
        var range: Range?
        var acknowledged: HistoryToken
        var afterChange: Int64
        var plan = PushPlanner.Plan()
        var batches: [PushPlanner.Batch] = []
        /// Whether the plan can free a unique value (``freesUniqueValues(_:uniqueColumns:)``):
        /// its batches then go one at a time.
        var freesUniqueValues = false
    }

    /// Plans and cuts `range` into batches (pure: off the engine's queue when read ahead).
    nonisolated func prepare(_ range: Range?, acknowledged: HistoryToken) -> PreparedRange {
        guard let range else { return PreparedRange(range: nil, acknowledged: acknowledged, afterChange: 0) }
        var plan = PushPlanner.plan(range.transactions)
        // A range that can free a unique value sends the records whose unique values it
        // changes first, so they share the first push: the server settles a push's unique
        // values once every change is applied, and a value swapped between two records (or
        // freed by one and taken by another) must not meet itself across two pushes.
        let unique = uniqueColumns
        let freesUnique = freesUniqueValues(plan.changes, uniqueColumns: unique)
        if freesUnique { plan.changes = PushPlanner.uniqueValuesFirst(plan.changes, uniqueColumns: unique) }
        let batches = PushPlanner.chunks(plan.changes, count: range.shape.count, bytes: range.shape.bytes)
        return PreparedRange(
            range: range, acknowledged: acknowledged, afterChange: range.afterChange, plan: plan, batches: batches,
            freesUniqueValues: freesUnique)
    }

    /// The saved range when it is still the one to send, else the next one (saved): the
    /// first ``firstRangeLimit`` local changes after the acknowledged transaction and after
    /// the last change pushed.
    func nextRange(after acknowledged: HistoryToken) throws -> Range? {
        if let saved = try read({ db in try InFlightRange.fetchOne(db) }) {
            // A range saved under another acknowledged token is dropped: sending the same
            // changes again under other keys changes nothing at the server (same values, same
            // stamps).
            if saved.acknowledged == acknowledged.rawValue, saved.batchChanges > 0, saved.batchBytes > 0,
                var range = try fetchRange(
                    after: acknowledged, afterChange: saved.afterChange, through: saved.throughChange, limit: rangeLimit,
                    shape: BatchShape(count: saved.batchChanges, bytes: saved.batchBytes)),
                range.throughChange == saved.throughChange
            {
                range.chunk = saved.nextBatch
                return range
            }
            try store { db in try InFlightRange.clear(db) }
        }
        let pushed = try container.syncPushedChange(acknowledged: acknowledged)
        guard let range = try fetchRange(after: acknowledged, afterChange: pushed, through: nil, limit: firstRangeLimit, shape: batchShape) else { return nil }
        try store { db in try range.saved(nextBatch: 0).save(db) }
        return range
    }

    /// The most changes a range holds (`pushRangeChanges`).
    nonisolated var rangeLimit: Int { min(max(configuration.pushRangeChanges, 1), 10_000_000) }

    /// The most changes the first range of a push holds: the batches of one window.
    nonisolated var firstRangeLimit: Int {
        min(rangeLimit, max(configuration.pushBatchSize, 1) * max(configuration.pushesInFlight, 1))
    }

    /// The first `limit` local changes after `afterChange` (only up to `through`, for a
    /// saved range), to cut into batches of `shape`.
    private nonisolated func fetchRange(after acknowledged: HistoryToken, afterChange: Int64, through: Int64?, limit: Int, shape: BatchShape) throws -> Range? {
        var descriptor = HistoryDescriptor.local(after: acknowledged, afterChange: afterChange)
        descriptor.changeLimit = limit + 1  // one more, to see whether the range ends a transaction
        let transactions: [HistoryTransaction]
        do { transactions = try container.fetchHistory(descriptor) } catch { throw SyncError(.store, "the store failed: \(error)") }
        var kept = 0
        var next: HistoryToken?
        var cut: [HistoryTransaction] = []
        for var transaction in transactions {
            let room = limit - kept
            let fits = transaction.changes.prefix { change in through.map { change.id <= $0 } ?? true }
            let taken = Array(fits.prefix(room))
            if taken.count < transaction.changes.count {
                next = transaction.token  // this transaction goes on after the range
            }
            if !taken.isEmpty {
                transaction.changes = taken
                cut.append(transaction)
                kept += taken.count
            }
            if next != nil { break }
        }
        guard let first = cut.first, let last = cut.last?.changes.last else { return nil }
        let lastToken = cut[cut.count - 1].token
        let finished: HistoryToken? =
            next == lastToken
            ? cut.dropLast().last?.token ?? (lastToken.rawValue - 1 > acknowledged.rawValue ? HistoryToken(rawValue: lastToken.rawValue - 1) : nil)
            : lastToken
        return Range(
            acknowledged: acknowledged, afterChange: afterChange, throughChange: last.id, firstToken: first.token, lastToken: lastToken,
            chunk: 0, transactions: cut, finishedThrough: finished, shape: shape)
    }
}

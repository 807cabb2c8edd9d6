public import Foundation
import GRDB
public import Tandem
import TandemSchema
import TandemWire
import TandemConflicts

/// The quarantine is a waiting room, not an exit: local changes the server refused are sent
/// again on every sync (and count as pending until it takes them), pulled changes that could
/// not be applied are applied again after every pull, and both can be listed, retried now
/// or dropped by hand.
extension SyncEngine {
    /// The most quarantined changes one sync sends or applies again.
    static let quarantineRetryLimit = 1_000

    /// Sends the local changes the server refused again, in one push. Those it takes leave
    /// the quarantine (their values may still lose to newer ones: logged as conflicts);
    /// those it refuses again stay, with its new reason.
    func retryQuarantined(schemaVersion: Int) async throws -> PushResult {
        let waiting = try read { db in try SyncStore.quarantined(pulled: false, db, limit: Self.quarantineRetryLimit) }
        guard !waiting.isEmpty else { return PushResult() }
        var changes: [WireChange] = []
        var ids: [Int64] = []
        var superseded: [(id: Int64, change: String, record: String)] = []
        for entry in waiting {
            guard var change = entry.wireChange else { continue }  // unreadable: listed, never sent
            // Values a later edit of the same record replaced (here, or pulled) need not reach
            // the server any more: the later one is what the record holds.
            guard let current = try read({ db in try Self.unsuperseded(change, db) }) else {
                superseded.append((entry.id, entry.change, change.record))
                continue
            }
            change = current
            changes.append(change)
            ids.append(entry.id)
        }
        if !superseded.isEmpty {
            let now = loggedNow()
            try store { db in
                for old in superseded {
                    try SyncStore.unquarantine([old.id], db)
                    try SyncStore.recordConflict(
                        SyncConflict(
                            at: now, record: old.record, attribute: "*", localValue: old.change, localStamp: nil,
                            remoteValue: nil, remoteStamp: nil, winner: .local, rule: ConflictRule.superseded.rawValue), db)
                }
            }
            logger.info("local changes the server refused were replaced by later edits; no longer waiting", metadata: ["changes": "\(superseded.count)"])
        }
        guard !changes.isEmpty else { return PushResult() }
        // Inserts first, then the rest: a change of a record whose insert is still refused
        // (or a link naming one) waits (``waitsForRefusedInsert(_:refused:_:)``).
        let isInsert = changes.map { $0.kind == .insert }
        if isInsert.contains(true), isInsert.contains(false) {
            var result = try await sendQuarantined(zip(changes, ids).filter { $0.0.kind == .insert }, schemaVersion: schemaVersion)
            let rest = try read { db in try zip(changes, ids).filter { try $0.0.kind != .insert && !waitsForRefusedInsert($0.0, db) } }
            result.add(try await sendQuarantined(rest, schemaVersion: schemaVersion))
            return result
        }
        let ready = try read { db in try zip(changes, ids).filter { try !waitsForRefusedInsert($0.0, db) } }
        return try await sendQuarantined(ready, schemaVersion: schemaVersion)
    }

    /// Sends quarantined local changes `waiting` (each with its quarantine id) as one push,
    /// and takes them out of the quarantine with what the server answered.
    private func sendQuarantined(_ waiting: [(WireChange, Int64)], schemaVersion: Int) async throws -> PushResult {
        let changes = waiting.map(\.0), ids = waiting.map(\.1)
        guard !changes.isEmpty else { return PushResult() }
        let clientID = try read { db in try SyncState.read(db)?.clientID } ?? "client"
        // The same waiting changes are the same push (a retry after a lost answer replays);
        // stamped again, or with others, they are another.
        let key = "\(clientID):v\(schemaVersion):quarantine:\(Self.fingerprint(changes.map { change in WireJSON.data { $0.append(change) }.utf8Text }))"
        logger.info("sending local changes the server refused again", metadata: ["changes": "\(changes.count)"])
        var result = try await send(PushPlanner.Batch(changes), key: key, schemaVersion: schemaVersion)
        result.echoes = []
        try store { db in
            try SyncStore.unquarantine(ids, db)
            try result.save(db)
        }
        return result
    }

    /// The records a link names: its owner and its member; `[]` for any other change.
    func linkEnds(_ change: WireChange) -> [String] {
        guard change.kind.isLink, let (relationship, member) = change.values.first, case .text(let id) = member,
            let destination = container.schema.entity(named: change.entity)?.relationship(named: relationship)?.destination
        else { return [] }
        return [change.record, "tandem://\(container.dataset)/\(destination)/\(id)"]
    }

    /// Whether `change` is of a record whose insert the server refused (waiting in the
    /// quarantine), or a link naming one: the server would take an update for a change of a
    /// record it deleted (applied before the insert, and lost on every replica), and refuse
    /// the link as one to a deleted record.
    func waitsForRefusedInsert(_ change: WireChange, refused: Set<String> = [], _ db: Database) throws -> Bool {
        guard change.kind != .insert else { return false }
        let records = change.kind.isLink ? linkEnds(change) : [change.record]
        return try records.contains { try refused.contains($0) || SyncStore.hasQuarantinedInsert(record: $0, pulled: false, db) }
    }

    /// `batch` less the changes that wait for a refused insert (``waitsForRefusedInsert(_:refused:_:)``),
    /// and those put in the quarantine beside it (sent again after it:
    /// ``retryQuarantined(schemaVersion:)``). `refused`: records whose insert was refused by
    /// this push and is not in the store's quarantine yet.
    ///
    /// ```swift
    /// let (rest, held) = try holdChangesOfRefusedInserts(batch, refused: result.refusedInserts)
    /// ```
    ///
    /// - Throws: ``SyncError`` with code `store` when the store cannot be read.
    func holdChangesOfRefusedInserts(_ batch: PushPlanner.Batch, refused: Set<String> = []) throws -> (PushPlanner.Batch, PushResult) {
        // One query when no insert waits (the usual push): the changes are looked at only then.
        let anyRefused = try !refused.isEmpty || read { db in try SyncStore.hasRefusedInsert(db) }
        guard anyRefused else { return (batch, PushResult()) }
        let held = try read { db in try batch.changes.map { try waitsForRefusedInsert($0, refused: refused, db) } }
        guard held.contains(true) else { return (batch, PushResult()) }
        var result = PushResult()
        let now = loggedNow()
        for (change, waits) in zip(batch.changes, held) where waits {
            result.quarantined += 1
            result.refused.append(
                (
                    WireJSON.data { $0.append(change) }.utf8Text, change.record,
                    "waits for the insert of its record (or of a record it links), which the server refused (tandem quarantine list)", now
                ))
        }
        return (PushPlanner.Batch(zip(batch.changes, held).filter { !$0.1 }.map(\.0)), result)
    }

    /// `change` less the values a later edit of its record replaced since (the record's
    /// stamp of the column is newer); `nil` when nothing of it is left: every value was
    /// replaced, the record was deleted after it, or (a delete) the record came back after it.
    static func unsuperseded(_ change: WireChange, _ db: Database) throws -> WireChange? {
        // A link is sent as it is: the server decides it (a later link or unlink of the same
        // member goes after it; an owner merged away here is the survivor's there).
        if change.kind.isLink { return change }
        guard let uri = RecordURI(change.record), try db.tableExists(uri.entity) else { return change }
        let row = try String?.fetchOne(
            db, sql: "SELECT \(ChangeApplier.stampColumn) FROM \(SQLName.quote(uri.entity)) WHERE \(ChangeApplier.idColumn) = ?",
            arguments: [uri.id])
        let stamps = change.stamps.compactMapValues { HLCTimestamp($0) }
        guard let row else { return change.kind == .delete ? change : nil }
        let current = (row ?? nil).flatMap(ChangeApplier.stamps) ?? [:]
        if change.kind == .delete {
            guard let created = current["*"], let deleted = stamps["*"] else { return change }
            return created > deleted ? nil : change
        }
        var kept = change
        var replaced: [String] = []
        for column in change.values.keys {
            guard let mine = stamps[column] ?? stamps["*"], let now = current[column] ?? current["*"] else { continue }
            if now > mine {
                kept.values[column] = nil
                kept.stamps[column] = nil
                replaced.append(column)
            }
        }
        // An insert the server never took stays an insert: the record is not on the server,
        // and an update alone would reach it as a change of a deleted record. The values a
        // later edit replaced go with it as the row holds them, with their stamps.
        if change.kind == .insert, !replaced.isEmpty {
            replaced.sort()
            let row = try Row.fetchWireValues(
                db.makeStatement(sql: "SELECT \(replaced.map(SQLName.quote).joined(separator: ", ")) FROM \(SQLName.quote(uri.entity)) WHERE \(ChangeApplier.idColumn) = ?"),
                arguments: [uri.id])
            for (index, column) in replaced.enumerated() {
                kept.values[column] = row?[index] ?? .null
                kept.stamps[column] = (current[column] ?? current["*"])?.description
            }
            if kept.stamps[WireChange.deleteStampKey] == nil, let created = current["*"] { kept.stamps[WireChange.deleteStampKey] = created.description }
        }
        return kept.values.isEmpty ? nil : kept
    }

    /// Applies the pulled changes waiting in the quarantine again, oldest first: those whose
    /// cause is gone (a unique value freed, their record's insert applied) leave it; the
    /// others go back with the reason of this try. Passes are repeated while one lets a
    /// change out: a change applied late in a pass may free what an earlier one waits for
    /// (an insert waiting for a value that a later rename in the same pull frees).
    /// ``retryPulledQuarantine()`` in rounds while each lets some changes out: more than one
    /// round's worth may wait (the links a bootstrap set aside, cut by a crash before it
    /// applied them all), and a sync that stopped at the first round's limit reported the
    /// rest as changes this store could not apply.
    func retryPulledQuarantineWhileItShrinks() throws -> ChangeApplier.Outcome {
        var total = ChangeApplier.Outcome()
        var waiting = try read { db in try SyncStore.quarantineCounts(db).pulled }
        while waiting > 0 {
            total.add(try retryPulledQuarantine())
            let left = try read { db in try SyncStore.quarantineCounts(db).pulled }
            if left >= waiting { break }
            waiting = left
        }
        return total
    }

    func retryPulledQuarantine() throws -> ChangeApplier.Outcome {
        let waiting = try read { db in try SyncStore.quarantined(pulled: true, db, limit: Self.quarantineRetryLimit) }
        guard !waiting.isEmpty else { return ChangeApplier.Outcome() }
        var applier = try makeApplier()
        applier.now = loggedNow()
        let outcome = try store { db in
            var outcome = ChangeApplier.Outcome()
            var pass = waiting
            while !pass.isEmpty {
                for entry in pass {
                    guard let position = entry.position, let change = entry.wireChange else { continue }
                    try SyncStore.unquarantine([entry.id], db)
                    try applier.apply(LogEntry(position: position, change: change, schemaVersion: entry.schemaVersion ?? 0), db, into: &outcome)
                }
                // Changes still waiting for one another's unique values (records that swapped
                // them elsewhere): applied together.
                var left = try SyncStore.quarantined(pulled: true, db, limit: Self.quarantineRetryLimit)
                if left.count > 1 {
                    try applier.applyUniqueRings(left, db, into: &outcome)
                    left = try SyncStore.quarantined(pulled: true, db, limit: Self.quarantineRetryLimit)
                }
                // Each pass that goes on let at least one change out: at most as many passes
                // as changes.
                pass = left.count < pass.count ? left : []
            }
            if let newest = outcome.newestStamp { try ModelContainer.advanceClock(past: newest, in: db) }
            return outcome
        }
        try resolve(outcome.resolutions)
        if !outcome.dangling.isEmpty {
            do { _ = try container.write(author: "sync.resolve") { db in try applier.resolveDangling(outcome.dangling, db) } } catch {
                throw SyncError(.store, "the store failed: \(error)")
            }
        }
        let still = try read { db in try SyncStore.quarantineCounts(db).pulled }
        if waiting.count > still {
            logger.info("applied quarantined pulled changes whose cause is gone", metadata: ["changes": "\(waiting.count - still)"])
        }
        return outcome
    }

    /// Sends the waiting local changes and applies the waiting pulled ones again now (what
    /// every sync does first), with the schema handshake first. Returns how many changes
    /// are still waiting (values of a newer schema are not in the quarantine: they are kept
    /// aside for a schema that can show them, see ``SyncSummary/keptForNewerSchema``).
    ///
    /// ```swift
    /// let left = try await engine.retryQuarantined()   // tandem quarantine retry
    /// ```
    ///
    /// - Throws: ``SyncError``.
    public func retryQuarantined() async throws -> Int {
        let version = try await handshake()
        _ = try await repairingClock { try await self.retryQuarantined(schemaVersion: version) }
        _ = try retryPulledQuarantine()
        let left = try read { db in try SyncStore.quarantineCounts(db) }
        return left.local + left.pulled
    }

    /// Drops quarantined changes for good (after reading them with ``SyncStatus/quarantined(of:limit:)``):
    /// a local one is then never sent, a pulled one never applied. Each is kept in the
    /// conflict log (rule `dropped`), so nothing leaves without a trace. Returns how many
    /// were dropped; ids that are not there are skipped.
    ///
    /// ```swift
    /// try SyncEngine.dropQuarantined([12, 13], in: container)   // tandem quarantine drop --store S 12 13
    /// ```
    ///
    /// - Throws: ``SyncError`` with code `store`.
    @discardableResult
    public static func dropQuarantined(_ ids: [Int64], in container: ModelContainer, now: Int64 = Int64(Date().timeIntervalSince1970 * 1000)) throws -> Int {
        do {
            return try container.write(author: SyncStore.author) { db in
                try SyncStore.create(db)
                var dropped = 0
                for id in ids {
                    guard let row = try Row.fetchOne(db, sql: "SELECT position, change, reason FROM tandem_sync_quarantine WHERE id = ?", arguments: [id]) else { continue }
                    let text: String = row[1]
                    let change = try? WireJSONReader.change(Data(text.utf8))
                    let local = (row[0] as Int64?) == nil
                    try SyncStore.recordConflict(
                        SyncConflict(
                            at: now, record: change?.record ?? "?", attribute: "*",
                            localValue: local ? text : nil, localStamp: nil,
                            remoteValue: local ? nil : text, remoteStamp: nil,
                            winner: local ? .remote : .local, rule: ConflictRule.dropped.rawValue), db)
                    dropped += try SyncStore.unquarantine([id], db)
                }
                return dropped
            }
        } catch let error as SyncError { throw error } catch {
            throw SyncError(.store, "the store failed: \(error)")
        }
    }

    /// Stamps again, with `replaced`, the local changes waiting in the quarantine.
    func restampQuarantined(_ replaced: [HLCTimestamp: HLCTimestamp]) throws {
        guard !replaced.isEmpty else { return }
        let text = Dictionary(uniqueKeysWithValues: replaced.map { ($0.key.description, $0.value.description) })
        try store { db in
            for entry in try SyncStore.quarantined(pulled: false, db) {
                guard var change = entry.wireChange else { continue }
                change.stamps = change.stamps.mapValues { text[$0] ?? $0 }
                try db.execute(
                    sql: "UPDATE tandem_sync_quarantine SET change = ? WHERE id = ?",
                    arguments: [WireJSON.data { $0.append(change) }.utf8Text, entry.id])
            }
        }
    }

    /// The stamps of the local changes waiting in the quarantine.
    func quarantinedStamps() throws -> Set<HLCTimestamp> {
        try read { db in
            Set(
                try SyncStore.quarantined(pulled: false, db).flatMap { entry in
                    (entry.wireChange?.stamps.values).map { $0.compactMap { HLCTimestamp($0) } } ?? []
                })
        }
    }

    /// FNV-1a of the texts: the same waiting changes give the same idempotency key in every
    /// process (Swift's `Hasher` is seeded per process).
    static func fingerprint(_ texts: [String]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for text in texts {
            for byte in text.utf8 {
                hash ^= UInt64(byte)
                hash &*= 0x100_0000_01b3
            }
            hash ^= 0xff
            hash &*= 0x100_0000_01b3
        }
        return String(hash, radix: 16) + ".\(texts.count)"
    }
}

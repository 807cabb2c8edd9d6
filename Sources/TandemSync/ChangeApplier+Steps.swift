import GRDB
import Tandem
import TandemConflicts
import TandemSchema
import TandemWire

/// The steps of ``ChangeApplier/apply(_:_:into:)`` after the change was read and routed: a
/// delete, an insert or update of a record this store lacks, one of a record it holds.
extension ChangeApplier {
    /// One pulled change on its way into the store: the change as it stands (pointed at a
    /// survivor, say), its record's id, its stamps parsed, the values this store's schema
    /// has, and the entity's SQL.
    struct PulledChange {
        let entry: LogEntry
        let change: WireChange
        let uuid: String
        let stamps: [String: HLCTimestamp]
        let values: [String: WireValue]
        let known: [String: Schema.Column]
        let table: String
        let statements: EntitySQL

        /// An insert's or update's values without a stamp of their own take the default under
        /// "*" (compact stamps); a delete's "*" stamps the delete.
        let defaultStamp: HLCTimestamp?
        /// An insert's creation: the server sends it under "*" (a re-insert's values can be
        /// older or newer than it); the newest value's stamp otherwise.
        let created: HLCTimestamp
        /// The `"#hlc"` text of the row an insert writes.
        let rowStamps: String

        init(
            entry: LogEntry, change: WireChange, uuid: String, stamps: [String: HLCTimestamp], values: [String: WireValue],
            known: [String: Schema.Column], table: String, statements: EntitySQL
        ) {
            self.entry = entry
            self.change = change
            self.uuid = uuid
            self.stamps = stamps
            self.values = values
            self.known = known
            self.table = table
            self.statements = statements
            defaultStamp = change.kind == .delete ? nil : stamps["*"]
            created = change.kind == .insert ? defaultStamp ?? values.keys.compactMap { stamps[$0] }.max() ?? .zero : .zero
            rowStamps = change.kind == .insert ? ChangeApplier.rowStamps(created: created, columns: values.keys, stamps: stamps) : ""
        }

        func remoteStamp(_ column: String) -> HLCTimestamp? { stamps[column] ?? defaultStamp }
    }

    /// The stored row a pulled change meets: its `"#hlc"` text (`nil` inside when the row has
    /// none), whether it exists, its stamps, and this store's unpushed stamps of it.
    struct StoredRow {
        let row: String??
        let exists: Bool
        let local: [String: HLCTimestamp]
        let mine: [String: HLCTimestamp]
    }

    /// A pulled delete: a merge into another record (both held a unique value), or the
    /// record removed with its links, unless this store made it again after the delete or an
    /// unpushed edit wins (`updateWinsOverDelete`); what lost is logged.
    func applyDelete(_ pulled: PulledChange, _ stored: StoredRow, _ db: Database, _ outcome: inout Outcome) throws {
        let change = pulled.change
        let uuid = pulled.uuid
        let stamps = pulled.stamps
        let known = pulled.known
        let table = pulled.table
        let statements = pulled.statements
        let exists = stored.exists
        let local = stored.local
        let mine = stored.mine
        func remoteStamp(_ column: String) -> HLCTimestamp? { pulled.remoteStamp(column) }
        func quarantine(_ reason: String) throws { try self.quarantine(pulled, reason, db, &outcome) }
        guard let delete = stamps[WireChange.deleteStampKey] else { return try quarantine("a delete without its '*' stamp") }
        // Merged into another record by the server (both held a unique value).
        if let target = change.mergedInto.flatMap(RecordURI.init), target.entity == change.entity, target.dataset == dataset,
            try applyMerge(pulled, into: target, stored, deleted: delete, db, &outcome)
        {
            return
        }
        // Pulled changes of the record still waiting in the quarantine lose to its delete.
        try dropQuarantined(of: change.record, deletedAt: delete, db, &outcome)
        guard exists else {
            // Deleted here already (this store's own delete coming back, or a delete
            // pulled twice): references that arrived meanwhile still get the rule. So
            // do links that name it: a merge into it moves links here while its insert
            // waits in the quarantine (a unique value held here), an insert this delete
            // then drops.
            try deleteLinks(of: uuid, change.entity, db)
            try recordDelete(of: uuid, change.entity, db, &outcome)
            return
        }
        if let created = local["*"], created > delete {
            try conflict(change.record, "*", local: nil, localStamp: created, remote: nil, remoteStamp: delete, winner: .local, rule: ConflictRule.insertAfterDelete.rawValue, db, &outcome)
            return
        }
        if let edited = mine.filter({ $0.key != "*" }).values.max(), edited > delete {
            if updateWinsOverDelete.contains(change.entity) {
                // The edit wins: the record comes back as a new local insert, pushed next.
                let columns = Array(known.keys).sorted()
                if let row = try Row.fetchWireValues(
                    db.makeStatement(sql: "SELECT \(columns.map(q).joined(separator: ", ")) FROM \(table) WHERE \(Self.idColumn) = ?"), arguments: [uuid])
                {
                    let values = Dictionary(uniqueKeysWithValues: zip(columns, row))
                    outcome.resolutions.append(Resolution(entity: change.entity, uuid: uuid, values: values, reinsert: true))
                }
                try conflict(change.record, "*", local: nil, localStamp: edited, remote: nil, remoteStamp: delete, winner: .local, rule: ConflictRule.updateWinsOverDelete.rawValue, db, &outcome)
            } else {
                try conflict(change.record, "*", local: nil, localStamp: edited, remote: nil, remoteStamp: delete, winner: .remote, rule: ConflictRule.deleteWins.rawValue, db, &outcome)
            }
        }
        try db.cachedStatement(sql: statements.delete).executeBound { $0.text(uuid) }
        // Its many-to-many links go with it (the deleting replica's own unlinks are not
        // pushed: they are the delete's).
        try deleteLinks(of: uuid, change.entity, db)
        outcome.applied += 1
        // A record an unpushed edit brings back (`updateWinsOverDelete`) keeps what
        // points at it.
        let comesBack = outcome.resolutions.last.map { $0.reinsert && $0.uuid == uuid && $0.entity == change.entity } ?? false
        if !comesBack { try recordDelete(of: uuid, change.entity, db, &outcome) }
    }

    /// A delete that merged the record into `target` (both held a unique value): its
    /// references point at the survivor, which the log already gave its values; `true` when
    /// that is done. This store made the record (its id) after the merge: a record of its own,
    /// as the server takes an insert newer than the merge; the merge was of the one before (by
    /// its creation stamp: a later edit of a record made before the merge goes to the
    /// survivor, as the server sends it). Pulled changes of the one before still waiting lose
    /// to the merge. `false` when the survivor is the record itself (then deleted as usual).
    func applyMerge(
        _ pulled: PulledChange, into target: RecordURI, _ stored: StoredRow, deleted delete: HLCTimestamp, _ db: Database,
        _ outcome: inout Outcome
    ) throws -> Bool {
        let (change, uuid, exists) = (pulled.change, pulled.uuid, stored.exists)
        if exists, let created = stored.local["*"], created > delete {
            try dropQuarantined(of: change.record, deletedAt: delete, db, &outcome)
            try conflict(
                change.record, "*", local: nil, localStamp: created, remote: nil, remoteStamp: delete, winner: .local,
                rule: ConflictRule.insertAfterDelete.rawValue, db, &outcome)
            return true
        }
        let survivor = try SyncStore.survivor(entity: change.entity, id: target.id, db) ?? target.id
        guard survivor != uuid else { return false }
        try dropQuarantined(of: change.record, deletedAt: delete, survivor: "tandem://\(dataset)/\(change.entity)/\(survivor)", db, &outcome)
        try merge(change.entity, loser: uuid, values: exists ? try rowState(change.entity, uuid, db)?.values : nil, into: survivor, at: delete, db, &outcome)
        if exists {
            try db.cachedStatement(sql: pulled.statements.delete).executeBound { $0.text(uuid) }
            outcome.applied += 1
        }
        return true
    }

    /// Drops the many-to-many links of record `uuid` (an `entity`) with its delete.
    func deleteLinks(of uuid: String, _ entity: String, _ db: Database) throws {
        for join in joinColumns[entity] ?? [] {
            try db.cachedStatement(sql: "DELETE FROM \(q(join.table)) WHERE \(join.column) = ?").execute(arguments: [uuid])
        }
    }

    /// A pulled insert or update of a record this store does not hold: an update loses to
    /// this store's delete (or waits behind its quarantined insert); an insert is written,
    /// unless this store deleted the record later and has not pushed it, or a unique value is
    /// held here (it waits in the quarantine).
    func applyToMissingRecord(_ pulled: PulledChange, _ stored: StoredRow, _ db: Database, _ outcome: inout Outcome) throws {
        let change = pulled.change
        let uuid = pulled.uuid
        let stamps = pulled.stamps
        let values = pulled.values
        let table = pulled.table
        let statements = pulled.statements
        let created = pulled.created
        let rowStamps = pulled.rowStamps
        let mine = stored.mine
        func remoteStamp(_ column: String) -> HLCTimestamp? { pulled.remoteStamp(column) }
        func quarantine(_ reason: String) throws { try self.quarantine(pulled, reason, db, &outcome) }
        func inserted() throws { try self.inserted(pulled, db, &outcome) }
        // An update of a record this store does not have: the store deleted it (the
        // log always brings a record's insert before its updates), so the delete
        // wins and the update is logged as lost.
        if change.kind == .update {
            // Its insert waits in the quarantine (a unique value taken here): so does
            // the update, applied after it once its cause is gone.
            if try SyncStore.hasQuarantinedPulled(record: change.record, db) {
                // Folded into the waiting insert when there is one: this update may be
                // what frees the value the insert waits for.
                if try foldIntoQuarantined(change.record, values: values, stamps: stamps, db) { return }
                return try quarantine("the record's insert is waiting in the quarantine; this update is applied after it")
            }
            let newest = values.keys.compactMap(remoteStamp).max()
            for (column, value) in values.sorted(by: { $0.key < $1.key }) {
                try conflict(
                    change.record, column, local: nil, localStamp: mine["*"], remote: value, remoteStamp: remoteStamp(column) ?? newest,
                    winner: .local, rule: ConflictRule.deleteWins.rawValue, db, &outcome)
            }
            return
        }
        // Deleted here and not pushed yet: a newer delete wins (it is pushed next). A
        // record created after the delete comes back now; if this insert carries only
        // part of it, the server answers the delete with the whole record.
        let pendingDelete = mine["*"]
        if let deleted = pendingDelete, created <= deleted {
            try conflict(change.record, "*", local: nil, localStamp: deleted, remote: nil, remoteStamp: created, winner: .local, rule: ConflictRule.deleteWins.rawValue, db, &outcome)
            return
        }
        // Usually every column: the insert is written once per entity.
        let names = values.count == statements.columns.count ? statements.columns : values.keys.sorted()
        let sql = names.count == statements.columns.count ? statements.insertAll : Self.insertSQL(table: table, columns: names.map(q))
        let bindInsert = { (bind: inout Statement.Binder) in
            bind.text(uuid)
            bind.text(rowStamps)
            for name in names { bind.value(values[name]!) }
        }
        do {
            try db.cachedStatement(sql: sql).executeBound(bindInsert)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            if pendingDelete != nil { return }  // part of a record: the delete's answer brings all of it
            // A unique value another record holds here: the server merges the two
            // when both hold it there (its decision follows in the log), or a later
            // change frees it. Until then the insert waits.
            guard let holder = try Self.uniqueHolder(of: change.entity, values: values, except: uuid, schema: schema, db) else {
                return try quarantine("the record cannot be inserted: \(error.message ?? "\(error.resultCode)")")
            }
            return try quarantine("a unique value of this record is held here by record \(holder); the insert waits until the server merges the two or the value is freed")
        }
        return try inserted()
    }

    /// A pulled insert or update of a record this store holds, column by column: the
    /// conflict core (``ColumnMerge``) and the policies decide each, what lost is logged, and
    /// the values that win are written in one statement (a unique value held here makes the
    /// change wait in the quarantine).
    func applyToStoredRecord(_ pulled: PulledChange, _ stored: StoredRow, _ db: Database, _ outcome: inout Outcome) throws {
        let change = pulled.change
        let uuid = pulled.uuid
        let values = pulled.values
        let table = pulled.table
        let row = stored.row
        let local = stored.local
        let mine = stored.mine
        func remoteStamp(_ column: String) -> HLCTimestamp? { pulled.remoteStamp(column) }
        func quarantine(_ reason: String) throws { try self.quarantine(pulled, reason, db, &outcome) }
        var writes = ColumnWrites()
        var merged = local
        // The local values are read only when a column needs them: a change this store
        // already has (its own push coming back) costs one lookup of the stamps.
        let sortedColumns = values.keys.sorted()
        var current: [WireValue]??
        func readLocal(at index: Int) throws -> WireValue {
            if current == nil {
                current = .some(
                    try Row.fetchWireValues(
                        db.cachedStatement(sql: "SELECT \(sortedColumns.map(q).joined(separator: ", ")) FROM \(table) WHERE \(Self.idColumn) = ?"),
                        arguments: [uuid]))
            }
            return current??[index] ?? .null
        }
        for (index, column) in sortedColumns.enumerated() {
            guard let remote = remoteStamp(column) else { continue }
            // A kept value shown at last: its column was never written here (added by the
            // migration, or holding a first case meanwhile) unless a stamp of its own says so.
            let localStamp = local[column] ?? (replayingKept ? nil : local["*"]) ?? .zero
            if remote == localStamp {
                // The same write: nothing to decide, unless the values differ. One save
                // stamps all it writes alike, so a unique merge can give one record two
                // values under one stamp (``ColumnMerge/winsTie(_:over:)`` decides, as on
                // the server); and applying a merge re-points references to the merged-
                // away record keeping their stamps, while the log may hold the write after
                // that record came back (its maker's, pulled back: the loser's id, which
                // sorts after the survivor's, wins the tie). Both follow a merge this store
                // applied first (the log holds it before them).
                guard merges.ever, let remoteValue = values[column],
                    uniqueEntities.contains(change.entity) || mergeableReferences[change.entity] != nil
                else { continue }
                let localValue = try readLocal(at: index)
                guard ColumnMerge.winsTie(remoteValue, over: localValue) else { continue }
                try conflict(
                    change.record, column, local: localValue, localStamp: localStamp, remote: remoteValue, remoteStamp: remote,
                    winner: .remote, rule: ConflictRule.lastWriterWins.rawValue, db, &outcome)
                writes.set(column, remoteValue)
                continue
            }
            // A later entry of the log holds the server's newer value of the column: a
            // policy's decision about an earlier one in the page no longer stands.
            outcome.supersede(change.entity, uuid, column)
            let localValue = try readLocal(at: index)
            let remoteValue = values[column]!
            // An unpushed local edit against a different pulled value: the policy decides;
            // when it decides otherwise than the newer stamp, the decision becomes a new
            // local edit after the page.
            if let unpushed = mine[column], unpushed == localStamp, localValue != remoteValue {
                try applyPolicy(pulled, column, local: localValue, localStamp: localStamp, remote: remoteValue, remoteStamp: remote, db, &outcome)
            }
            // The conflict core decides; a policy other than last writer wins has logged
            // its own decision above.
            // A pulled value of this store's own (pulled after a sync cut off between its push
            // and its pull) is an older edit of its own: replaced, not a conflict.
            let decision = ColumnMerge.decide(
                incoming: remote, current: localStamp, valuesDiffer: localValue != remoteValue,
                unpushed: mine[column] == localStamp,
                ownEdit: (mine[column] != nil || localStamp.node == node) && !isOwn(remote),
                ownOverOther: isOwn(remote) && !isOwn(localStamp) && mine[column] == nil,
                incomingWins: remoteWins)
            let byStamp = mine[column] == nil || policy(change.entity, column).name == ConflictRule.lastWriterWins.rawValue
            // A value under the zero stamp is nobody's write: the default this store fills in
            // for a column a pulled insert leaves out (the server logs an insert merged into
            // a record it has with only the values it changed: a resync's, say). It loses to
            // any written value, and that is no conflict.
            // A requested resync pulls again what this store pulled before: an older value
            // losing to this store's was decided then (logged, if it was a conflict), or this
            // store's edit was made after it.
            let replayed = pulled.entry.position > 0 && pulled.entry.position <= replayThrough
            if let loser = decision.logged, byStamp, remote != .zero, !(replayed && loser == .currentWon) {
                try conflict(
                    change.record, column, local: localValue, localStamp: localStamp, remote: remoteValue, remoteStamp: remote,
                    winner: loser == .incomingWon ? .remote : .local, rule: ConflictRule.lastWriterWins.rawValue, db, &outcome)
            } else if decision.applies, change.mergedFrom != nil, localStamp != .zero, localValue != remoteValue {
                // A value of a record merged into this one (see ``WireChange/mergedFrom``),
                // written without seeing this one: this one lost (the server keeps it too).
                try conflict(
                    change.record, column, local: localValue, localStamp: localStamp, remote: remoteValue, remoteStamp: remote,
                    winner: .remote, rule: ConflictRule.uniqueMerge.rawValue, db, &outcome)
            }
            if decision.applies {
                writes.set(column, remoteValue)
                merged[column] = remote
            }
        }
        if change.kind == .insert { try recordInsert(of: uuid, change.entity, db) }
        guard !writes.assignments.isEmpty else { return }
        try write(writes, stamps: Self.stampText(merged, replacing: row ?? nil), pulled, db, &outcome)
    }

    /// The values a pulled change wins in a stored row, in column order, for one `UPDATE`.
    struct ColumnWrites {
        var assignments: [String] = []
        var assigned: [String: WireValue] = [:]
        var arguments: [WireValue] = []

        mutating func set(_ column: String, _ value: WireValue) {
            assignments.append(SQLName.quote(column) + " = ?")
            assigned[column] = value
            arguments.append(value)
        }
    }

    /// An unpushed local edit against a different pulled value: the policy decides; when it
    /// decides otherwise than the newer stamp, the decision becomes a new local edit after
    /// the page (a resolution), and is logged.
    func applyPolicy(
        _ pulled: PulledChange, _ column: String, local localValue: WireValue, localStamp: HLCTimestamp, remote remoteValue: WireValue,
        remoteStamp remote: HLCTimestamp, _ db: Database, _ outcome: inout Outcome
    ) throws {
        let change = pulled.change
        let rule = policy(change.entity, column)
        let newer = remoteWins(remote, localStamp) ? remoteValue : localValue
        let decided: WireValue
        switch rule {
        case .lastWriterWins: decided = newer
        case .serverWins: decided = remoteValue
        case .clientWins: decided = localValue
        case .custom(let resolve): decided = resolve(ConflictValues(record: change.record, attribute: column, local: localValue, remote: remoteValue, base: nil))
        }
        guard decided != newer else { return }
        outcome.resolutions.append(Resolution(entity: change.entity, uuid: pulled.uuid, values: [column: decided]))
        try conflict(
            change.record, column, local: localValue, localStamp: localStamp, remote: remoteValue, remoteStamp: remote,
            winner: decided == remoteValue ? .remote : .local, rule: rule.name, db, &outcome)
    }

    /// Writes the values a pulled change won in its stored row, with the row's new stamps
    /// (`text`: unchanged when a tie was decided for the pulled value). A unique value another
    /// record holds here makes the change wait in the quarantine instead.
    func write(_ writes: ColumnWrites, stamps text: String, _ pulled: PulledChange, _ db: Database, _ outcome: inout Outcome) throws {
        let (change, uuid, table) = (pulled.change, pulled.uuid, pulled.table)
        let (assignments, assigned, arguments) = (writes.assignments, writes.assigned, writes.arguments)
        func quarantine(_ reason: String) throws { try self.quarantine(pulled, reason, db, &outcome) }
        let update = {
            try db.cachedStatement(sql: "UPDATE \(table) SET \(assignments.joined(separator: ", ")), \(Self.stampColumn) = ? WHERE \(Self.idColumn) = ?")
                .executeBound { bind in
                    for argument in arguments { bind.value(argument) }
                    bind.text(text)
                    bind.text(uuid)
                }
        }
        do {
            try update()
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            // Updated to a unique value another record holds here: as for an insert, the
            // update waits for the server's merge or for the value to be freed.
            guard let current = try rowState(change.entity, uuid, db),
                let holder = try Self.uniqueHolder(of: change.entity, values: current.values.merging(assigned) { $1 }, except: uuid, schema: schema, db)
            else {
                return try quarantine("the record cannot be updated: \(error.message ?? "\(error.resultCode)")")
            }
            if try foldIntoQuarantined(change.record, values: pulled.values, stamps: pulled.stamps, updates: true, db) {
                outcome.quarantined += 1
                return
            }
            return try quarantine("a unique value this update sets is held here by record \(holder); the update waits until the server merges the two or the value is freed")
        }
        outcome.applied += 1
        try checkReferences(assigned, of: change.entity, uuid, db, &outcome)
    }
}

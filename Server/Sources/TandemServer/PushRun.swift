import TandemConflicts
import TandemSchema
import TandemWire

/// One push applied on its ``PushWorkspace``, step by step: each change merged into its
/// record and logged (``apply(_:stamps:at:)``), the unique values its records hold settled
/// (``settleUniqueValues()``, PushRun+UniqueValues.swift), the links a delete or a revival
/// touches settled as they happen (PushRun+Links.swift), and the answer (``answer()``). It
/// reads and writes only the workspace: the storage reads before and writes after
/// (``PushWorkspace/perform(_:on:)``).
///
/// ```swift
/// var run = PushRun(processor, plan: plan, changeCount: changes.count, canonical: text, every: false, workspace: workspace)
/// for (index, (change, stamps)) in zip(changes, stamps).enumerated() { try run.apply(change, stamps: stamps, at: index) }
/// try run.settleUniqueValues()
/// let applied = run.answer()
/// ```
///
/// Throws ``PushRefusal`` only for a change that names a record of another entity.
struct PushRun {
    let datasetName: String
    let cursorScope: Cursor.Scope
    let schemaVersion: Int
    let schema: Schema
    let now: Int64
    /// A resync's push: its inserts may be of records deleted long ago (``PushRequest/resync``).
    let resync: Bool
    let canonical: PushProcessor.CanonicalText?
    /// Whether the answer lists every change's outcome (else only those that lost a value or
    /// were not applied).
    let every: Bool
    var workspace: PushWorkspace
    var result: PushProcessor.Applied
    /// The log is the push's alone from `before` to its end (the writer is serialized): an
    /// echo when every entry is what the push sent.
    let before: Int64
    var last: Int64
    var isEcho = true
    /// What the schema means for this push (unique entities, link ends, mergeable references).
    let plan: PushPlan
    var unique: UniqueMerge { plan.unique }
    /// Each merge needs two live records holding one value, so a push's merges are few;
    /// the bound only keeps a cascade of carried values finite.
    var mergesLeft = 64
    /// Records of unique entities this push changed, in the order it first touched them,
    /// with the unique values each held before: settled when every change is applied.
    /// A push holds a replica's records as they are after its last save (each record's
    /// edits coalesced), so values swapped between two records, or freed by one record and
    /// taken by another in a later save, never meet: only a value another replica's record
    /// holds is a collision. `new`: the values it holds after its last change in the push.
    var touched: [(uri: String, entity: String, old: [String], new: [String])] = []
    var touchedIndex: [String: Int] = [:]
    /// Records before it are in `touchedIndex`; later ones were new records, indexed only
    /// when a touch needs to look them up (a bulk import never does).
    var indexedThrough = 0
    /// Whether this push merged two records (records settled after it are read again).
    var anyMerge = false
    /// Many-to-many links: replicas drop a record's join rows when they apply its delete,
    /// whatever the links' stamps; the server says what becomes of each link that names the
    /// record, in log order after the delete or the revival, so every replica ends with the
    /// same rows.
    var linkOwnerEntities: Set<String> { plan.linkOwnerEntities }
    var linkMemberEntities: Set<String> { plan.linkMemberEntities }
    var mergeableReferences: [String: [(column: String, destination: String)]] { plan.mergeableReferences }

    init(_ processor: PushProcessor, plan: PushPlan, changeCount: Int, canonical: PushProcessor.CanonicalText?, every: Bool, workspace: PushWorkspace) {
        datasetName = processor.datasetName
        cursorScope = processor.cursorScope
        schemaVersion = processor.schemaVersion
        schema = processor.schema
        now = processor.now
        resync = processor.resync
        self.canonical = canonical
        self.every = every
        self.workspace = workspace
        result = PushProcessor.Applied(response: PushResponse(outcomes: [], changeCount: every ? nil : changeCount, serverTime: processor.now))
        before = workspace.lastLogPosition()
        last = before
        self.plan = plan
    }

    /// Merges change `index` (`sent` as the push carries it, validated) into its record, logs
    /// what was applied and records what lost.
    mutating func apply(_ sent: WireChange, stamps changeStamps: [String: HLCTimestamp], at index: Int) throws {
        var change = sent
        let rewrites = try mergedReferences(in: change, stamps: changeStamps)
        let creation = change.kind == .insert ? PushProcessor.creation(of: change, changeStamps) : nil
        if let created = creation, try insertNew(change, stamps: changeStamps, created: created, at: index) {
            return try rewriteReferences(change.record, change.entity, rewrites)
        }
        // A record merged into another: its later changes are the survivor's (see
        // ``followMerge(_:stamps:newest:at:)``).
        // An insert's by its creation (see ``creation(of:_:)``), as RecordMerge dates it.
        let newest = creation ?? changeStamps.values.max() ?? .zero
        var redirected = false
        var remadeAfterMerge: (state: RecordState?, stamp: HLCTimestamp)?
        if unique.hasUniqueValues(change.entity), change.kind != .delete {
            switch try followMerge(&change, stamps: changeStamps, newest: newest, at: index) {
            case .revived: return
            case .redirected: redirected = true
            case .remade(let state, let stamp): remadeAfterMerge = (state, stamp)
            case .none: break
            }
        }
        // A link or an unlink: one field of its record, `<relationship>#<member>`, true
        // while linked, merged by stamp like any value (the later wins).
        if let field = change.linkField, let stamp = changeStamps.values.first {
            return try applyLink(change, sent: sent, field: field, stamp: stamp, at: index, redirected: redirected)
        }
        try applyToRecord(change, stamps: changeStamps, created: creation, redirected: redirected, remadeAfterMerge: remadeAfterMerge, at: index)
        try rewriteReferences(change.record, change.entity, rewrites)
    }

    /// The references `change` sets to records merged into others: pointed at their
    /// survivors once the change is applied (``rewriteReferences(_:_:_:)``).
    mutating func mergedReferences(
        in change: WireChange, stamps changeStamps: [String: HLCTimestamp]
    ) throws
        -> [(column: String, loser: String, survivor: String, stamp: HLCTimestamp)]
    {
        var rewrites: [(column: String, loser: String, survivor: String, stamp: HLCTimestamp)] = []
        if change.kind == .insert || change.kind == .update, let targets = mergeableReferences[change.entity] {
            for (column, destination) in targets {
                guard case .text(let id)? = change.values[column], let sentStamp = changeStamps[column],
                    let merged = try survivor(of: "tandem://\(datasetName)/\(destination)/\(id)", stampedAt: sentStamp),
                    let survivor = RecordURI(merged)?.id, survivor != id
                else { continue }
                rewrites.append((column, id, survivor, sentStamp))
            }
        }
        return rewrites
    }

    /// A record the server has never seen, made by an insert: everything it sent is applied,
    /// and it was created at `created` (``PushProcessor/creation(of:_:)``, what RecordMerge
    /// decides, without building the merge's dictionaries). Tried before the record is looked
    /// up; `false` when the record exists.
    mutating func insertNew(_ change: WireChange, stamps changeStamps: [String: HLCTimestamp], created: HLCTimestamp, at index: Int) throws -> Bool {
        // A resync's record made before the tombstone horizon: perhaps one deleted long ago.
        if resync, workspace.tombstonesBefore > 0, created.physical < UInt64(workspace.tombstonesBefore) { return false }
        guard workspace.insertNewRecord(change.record, entity: change.entity, values: change.values, stamps: changeStamps, created: created) else {
            return false
        }
        // A compact insert's one stamp is its creation stamp already: logged as sent.
        let compact = change.stamps.count == 1 && change.stamps[WireChange.deleteStampKey] != nil
        let position = Self.log(
            {
                var applied = change; applied.setCreationStamp(created.description); return applied
            }(),
            whole: true, index: index, sent: change, created: compact ? nil : created, canonical: canonical,
            schemaVersion: schemaVersion, to: &workspace)
        last = position
        outcome(index, position: position, applied: change.values.keys.sorted(), lost: [])
        if unique.hasUniqueValues(change.entity) {
            touch(change.record, change.entity, old: [], new: unique.keys(of: change.entity, values: change.values), isNew: true)
        }
        return true
    }

    /// What ``followMerge(_:stamps:newest:at:)`` did with a change of a merged-away record.
    enum MergeFollowed {
        /// Not merged away (or made again before the change): applied to its own record.
        case none
        /// Sent to the survivor.
        case redirected
        /// An insert newer than the merge: the record is its own again; the links it had at
        /// the merge (`state`) are unlinked after it.
        case remade(state: RecordState?, stamp: HLCTimestamp)
        /// An update that frees the shared unique value brought the record back, logged: done.
        case revived
    }

    /// A change of a record merged into another (both held a unique value): its later
    /// changes are the survivor's (`change` is pointed there). An insert newer than the merge
    /// makes it a record of its own again; a link made before that, by a replica that had not
    /// heard of the merge, still goes to the survivor (that replica moved it there when it
    /// applied the merge). An edit made before its maker learned of the merge that changes
    /// the shared value frees it: the loser lives again with the edit.
    mutating func followMerge(
        _ change: inout WireChange, stamps changeStamps: [String: HLCTimestamp], newest: HLCTimestamp,
        at index: Int
    ) throws -> MergeFollowed {
        guard let merged = workspace.mergedInto(change.record),
            merged.remade == nil || (change.kind.isLink && merged.takes(newest))
        else { return .none }
        let reinserted = change.kind == .insert && newest > merged.stamp
        if reinserted {
            var remade = merged
            remade.remade = newest
            workspace.setMerged(change.record, remade)
            return .remade(state: merged.state, stamp: merged.stamp)
        }
        if change.kind == .update, let loser = merged.state {
            // As if the edit had reached the server first.
            var edited: RecordState? = loser
            let applied = RecordMerge.apply(change, stamps: changeStamps, to: &edited)
            if var revived = edited, !applied.applied.isEmpty, unique.keys(of: revived) != unique.keys(of: loser) {
                let current = try workspace.record(change.record) ?? loser
                let stamp = UniqueMerge.mergeStamp(loser: current, now: now)
                revived.created = stamp
                revived.deleted = nil
                workspace.setRecord(change.record, revived)
                workspace.setMerged(change.record, nil)
                var insert = WireChange(
                    record: change.record, entity: change.entity, kind: .insert, values: revived.values.mapValues(\.value),
                    stamps: revived.values.mapValues(\.stamp.description))
                insert.setCreationStamp(stamp.description)
                let position = workspace.appendLog(insert, schemaVersion: schemaVersion)
                last = position
                isEcho = false
                outcome(index, position: position, applied: applied.applied.keys.sorted(), lost: applied.lost)
                touch(change.record, change.entity, old: [], new: unique.keys(of: revived))
                return .revived
            }
        }
        let loser = change.record
        change.record = try survivor(of: change.record, stampedAt: newest) ?? merged.survivor
        if change.kind == .insert { change.kind = .update }
        // Written without seeing the survivor: what it replaces there lost, logged as such.
        if change.kind == .update { change.mergedFrom = loser }
        isEcho = false
        return .redirected
    }

    /// An insert, update or delete merged into its stored record with ``RecordMerge``: the
    /// state saved, what was applied logged (from the push's own text when it is everything
    /// the change sent), a restored record logged whole, the links its delete or revival
    /// touches settled, what lost recorded, its unique values noted for settling.
    mutating func applyToRecord(
        _ change: WireChange, stamps changeStamps: [String: HLCTimestamp], created creation: HLCTimestamp?,
        redirected: Bool, remadeAfterMerge: (state: RecordState?, stamp: HLCTimestamp)?, at index: Int
    ) throws {
        var state = try workspace.record(change.record)
        // No state, in a dataset whose tombstones of deletes before T were pruned (compaction):
        // an update comes after its record's insert, so the record was deleted long ago; so
        // was one a resync sends again, made before T. It loses to that delete, stamped T, as
        // it would have to the tombstone, and the delete is logged, so every replica holding
        // the record drops it. (Any other insert is a new record: one made offline before T
        // is no rarer than one deleted since; docs/sync.md.)
        var pruned: HLCTimestamp?
        if state == nil, workspace.tombstonesBefore > 0 {
            let horizon = HLCTimestamp(physical: UInt64(workspace.tombstonesBefore), counter: 0, node: 0)
            let made = creation ?? change.values.keys.compactMap { changeStamps[$0] }.max() ?? .zero
            if change.kind == .update || (resync && change.kind == .insert && made < horizon) {
                state = RecordState(entity: change.entity, deleted: horizon)
                pruned = horizon
            }
        }
        if let existing = state, existing.entity != change.entity {
            throw PushRefusal.wrongEntity(record: change.record, stored: existing.entity, sent: change.entity)
        }
        let before = pruned == nil ? state : nil
        let merged = RecordMerge.apply(change, stamps: changeStamps, created: creation, to: &state)
        var position: Int64?
        if let pruned, state?.isDeleted == true {
            last = workspace.appendLog(
                WireChange(record: change.record, entity: change.entity, kind: .delete, stamps: [WireChange.deleteStampKey: pruned.description]),
                schemaVersion: schemaVersion)
            isEcho = false
        }
        // Saved whenever it changed: a value newer than a delete is kept even when it
        // is not applied (the record stays deleted), so arrival order cannot matter.
        if let state, state != before {
            workspace.setRecord(change.record, state)
        }
        if !merged.applied.isEmpty {
            // Only what the change sent, value for value and stamp for stamp? A re-insert
            // brings back values kept while the record was deleted (a column the change
            // carries too may hold a newer value from elsewhere), and an insert of a
            // record created later elsewhere carries that creation stamp.
            let sentOnly =
                change.kind == .delete
                || merged.applied.allSatisfy { change.values[$0.key] == $0.value.value && changeStamps[$0.key] == $0.value.stamp }
            var applied = change
            // Everything it sent applied: the change itself (a stamp's text is canonical,
            // the only form the reader accepts), logged from the push's own text.
            let whole = sentOnly && merged.applied.count == max(change.values.count, 1) && !redirected
            if !whole {
                applied.values = change.kind == .delete ? [:] : merged.applied.mapValues(\.value)
                applied.stamps = merged.applied.mapValues(\.stamp.description)
                if change.kind == .update { applied = applied.compacted() }
            }
            let created = change.kind == .insert ? state?.created : nil
            if let created { applied.setCreationStamp(created.description) }
            position = Self.log(applied, whole: whole, index: index, sent: change, created: created, canonical: canonical, schemaVersion: schemaVersion, to: &workspace)
            last = position!
            switch change.kind {
            case .delete, .link, .unlink: break
            case .update: if !sentOnly { isEcho = false }
            case .insert: if !sentOnly || state?.created != creation { isEcho = false }
            }
        }
        if let restore = merged.restore, !restore.isEmpty {
            var restored = WireChange(
                record: change.record, entity: change.entity, kind: .insert,
                values: restore.mapValues(\.value), stamps: restore.mapValues(\.stamp.description))
            if let created = state?.created { restored.setCreationStamp(created.description) }
            last = workspace.appendLog(restored, schemaVersion: schemaVersion)
            isEcho = false
        }
        if let after = state, linkOwnerEntities.contains(change.entity) || linkMemberEntities.contains(change.entity) {
            if let remade = remadeAfterMerge {
                try linksDied(change.record, change.entity, before: remade.state, deleted: remade.stamp)
            }
            if let deleted = after.deleted, deleted != before?.deleted {
                try linksDied(change.record, change.entity, before: before, deleted: deleted)
            }
            if !after.isDeleted, before?.isDeleted == true || merged.restore != nil {
                try linksRevived(change.record, change.entity, state: after)
            }
        }
        for lost in merged.lost {
            workspace.recordLost(lost, record: change.record, position: position, at: now)
        }
        if change.mergedFrom != nil { recordReplaced(merged.applied, of: before, record: change.record, position: position) }
        outcome(index, position: position, applied: merged.applied.keys.sorted(), lost: merged.lost)
        if unique.hasUniqueValues(change.entity) {
            touch(change.record, change.entity, old: unique.keys(of: before), new: unique.keys(of: state))
        }
    }

    /// Keeps in the lost values those of `before` (the survivor of a unique merge) that
    /// `applied` replaced: values of the merged-away record, written without seeing the
    /// survivor's, so each replaced one lost a conflict (replicas log it from the logged
    /// change's `mergedFrom`).
    mutating func recordReplaced(_ applied: [String: RecordState.Field], of before: RecordState?, record: String, position: Int64?) {
        guard let before, !before.isDeleted else { return }
        for (column, new) in applied.sorted(by: { $0.key < $1.key }) {
            guard let old = before.fields[column], old.value != new.value else { continue }
            let lost = LostValue(
                attribute: column, value: old.value, stamp: old.stamp.description, winningValue: new.value, winningStamp: new.stamp.description)
            workspace.recordLost(lost, record: record, position: position, at: now)
        }
    }

    /// The answer: the outcomes gathered, and the echo when the log holds only what the push
    /// sent.
    func answer() -> PushProcessor.Applied {
        var result = self.result
        // Position 0 is the start, which clients hold as the empty cursor (as `after=`).
        let cursor = { (position: Int64) in position == 0 ? "" : Cursor(cursorScope, position: position).text }
        result.response.echo = isEcho ? PushEcho(from: cursor(before), to: cursor(last)) : nil
        return result
    }

    mutating func outcome(_ index: Int, position: Int64?, applied: @autoclosure () -> [String], lost: [LostValue]) {
        if position != nil { result.applied += 1 }
        result.lost += lost.count
        guard every || position == nil || !lost.isEmpty else { return }
        result.response.outcomes.append(ChangeOutcome(index: every ? nil : index, position: position, applied: applied(), lost: lost))
    }
    // The log is the push's alone from here to its end (the writer is serialized): an

    /// Where a change stamped `stamp` that names `uri` goes: the last survivor of the merges
    /// that took `uri` (merged into a record merged in turn, and so on); `nil` when none
    /// takes it (never merged, or made again at or before the stamp: the new record's).
    mutating func survivor(of uri: String, stampedAt stamp: HLCTimestamp) throws -> String? {
        guard let first = workspace.mergedInto(uri), first.takes(stamp) else { return nil }
        var survivor = first.survivor
        var hops = 0
        while hops < 16, let next = workspace.mergedInto(survivor), next.takes(stamp) {
            survivor = next.survivor
            hops += 1
        }
        return survivor
    }

    /// After a change is applied: each reference it set to a record merged into another
    /// (`rewrites`), still the record's value, points at the survivor, by an update with
    /// a server stamp just after the one sent, logged after the change. Every replica,
    /// the one that wrote it too (its store holds the loser's id), takes the survivor's.
    /// The change itself is applied as sent: a newer stamp on it would make an insert
    /// newer than a delete it lost to.
    mutating func rewriteReferences(
        _ uri: String, _ entity: String,
        _ rewrites: [(column: String, loser: String, survivor: String, stamp: HLCTimestamp)]
    ) throws {
        guard !rewrites.isEmpty, let before = try workspace.record(uri), !before.isDeleted else { return }
        var values: [String: WireValue] = [:]
        var stamps: [String: HLCTimestamp] = [:]
        for rewrite in rewrites where before.fields[rewrite.column] == RecordState.Field(value: .text(rewrite.loser), stamp: rewrite.stamp) {
            values[rewrite.column] = .text(rewrite.survivor)
            // Just after the sent stamp (node 0): the writer takes it, and an edit of the
            // column made later elsewhere still wins, whenever it arrives.
            stamps[rewrite.column] = UniqueMerge.stamp(after: rewrite.stamp, now: 0)
        }
        guard !values.isEmpty else { return }
        var state: RecordState? = before
        let merged = RecordMerge.apply(WireChange(record: uri, entity: entity, kind: .update, values: values), stamps: stamps, to: &state)
        if let state, state != before { workspace.setRecord(uri, state) }
        guard !merged.applied.isEmpty else { return }
        last = workspace.appendLog(
            WireChange(
                record: uri, entity: entity, kind: .update, values: merged.applied.mapValues(\.value),
                stamps: merged.applied.mapValues(\.stamp.description)
            ).compacted(), schemaVersion: schemaVersion)
        isEcho = false
    }

    /// Appends `applied` to the log: from the push's own text when change `index` was
    /// applied whole (`created`, an insert's creation stamp, is spliced in as it is among
    /// `applied`'s stamps), written anew otherwise. `applied` is built only when needed
    /// (the usual new record is logged from the push's text).
    static func log(
        _ applied: @autoclosure () -> WireChange, whole: Bool, index: Int, sent change: WireChange, created: HLCTimestamp?,
        canonical: PushProcessor.CanonicalText?, schemaVersion: Int,
        to workspace: inout PushWorkspace
    ) -> Int64 {
        if whole, let json = canonical?.logEntry(index, change, created: created) {
            return workspace.appendLog(json: json, schemaVersion: schemaVersion)
        }
        return workspace.appendLog(applied(), schemaVersion: schemaVersion)
    }
}

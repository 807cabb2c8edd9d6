import TandemConflicts
import TandemSchema
import TandemWire

/// Unique values: which record holds each, claimed once the whole push is applied, and the
/// merge of two live records that hold one.
extension PushRun {
    /// Record `uri` now holds the unique values `new` instead of `old`: frees the ones it
    /// gave up and claims the others (all of `new` with `claimAll`); a value another live
    /// record holds merges the two.
    mutating func settle(_ uri: String, _ entity: String, old: [String], new: [String], claimAll: Bool = false) throws {
        for key in old where !new.contains(key) { workspace.releaseUnique(entity: entity, key: key, record: uri) }
        for key in new where claimAll || !old.contains(key) {
            guard let holder = workspace.claimUnique(entity: entity, key: key, record: uri) else { continue }
            guard let held = try workspace.record(holder), held.entity == entity, unique.keys(of: held).contains(key) else {
                // The holder no longer holds it (the index is kept with every change, so
                // only a damaged index gets here): the value is free.
                workspace.releaseUnique(entity: entity, key: key, record: holder)
                _ = workspace.claimUnique(entity: entity, key: key, record: uri)
                continue
            }
            guard mergesLeft > 0 else { continue }
            mergesLeft -= 1
            try merge(uri, holder, entity)
            return  // the merge settled both records' values
        }
    }

    mutating func touch(_ uri: String, _ entity: String, old: [String], new: [String], isNew: Bool = false) {
        // A record the storage did not have: this is its first touch (a later change of it
        // finds it stored).
        if isNew {
            touched.append((uri, entity, old, new))
            return
        }
        while indexedThrough < touched.count {
            touchedIndex[touched[indexedThrough].uri] = indexedThrough
            indexedThrough += 1
        }
        if let index = touchedIndex[uri] {
            touched[index].new = new
            return
        }
        touchedIndex[uri] = touched.count
        touched.append((uri, entity, old, new))
        indexedThrough = touched.count
    }

    /// Settles the unique values of every record the push touched: every value given up is
    /// free before any is claimed, so values swapped between the push's records never meet.
    mutating func settleUniqueValues() throws {
        // Every value the push's records gave up is free before any is claimed.
        for record in touched {
            for key in record.old where !record.new.contains(key) { workspace.releaseUnique(entity: record.entity, key: key, record: record.uri) }
        }
        for record in touched {
            // A merge earlier in this loop may have changed or deleted it: then it is read
            // again, and claims all it holds.
            if anyMerge {
                try settle(record.uri, record.entity, old: [], new: unique.keys(of: try workspace.record(record.uri)))
            } else {
                try settle(record.uri, record.entity, old: record.old, new: record.new)
            }
        }
    }

    /// Merges records `a` and `b` (one entity, both holding a unique value) as
    /// ``UniqueMerge`` says, and logs it: the loser's values and links as an update and
    /// links of the survivor, then the loser's delete with `mergedInto`.
    mutating func merge(_ a: String, _ b: String, _ entity: String) throws {
        isEcho = false
        anyMerge = true
        let survivor = UniqueMerge.survivor(of: a, and: b)
        let loser = survivor == a ? b : a
        guard let loserState = try workspace.record(loser), let survivorBefore = try workspace.record(survivor) else { return }
        for key in unique.keys(of: loserState) { workspace.releaseUnique(entity: entity, key: key, record: loser) }
        var survivorState: RecordState? = survivorBefore
        // Values the survivor holds already keep the survivor's stamp: the replica that wrote
        // them still sees its own edit, and logs it if a later one replaces it.
        let values = loserState.values.filter { survivorBefore.fields[$0.key]?.value != $0.value.value }
        if !values.isEmpty {
            let carried = RecordMerge.apply(
                WireChange(record: survivor, entity: entity, kind: .update, values: values.mapValues(\.value)),
                stamps: values.mapValues(\.stamp), to: &survivorState)
            var position: Int64?
            if !carried.applied.isEmpty {
                let applied = WireChange(
                    record: survivor, entity: entity, kind: .update, values: carried.applied.mapValues(\.value),
                    stamps: carried.applied.mapValues(\.stamp.description), mergedFrom: loser
                ).compacted()
                position = workspace.appendLog(applied, schemaVersion: schemaVersion)
                last = position!
                recordReplaced(carried.applied, of: survivorBefore, record: survivor, position: position)
            }
            for lost in carried.lost { workspace.recordLost(lost, record: survivor, position: position, at: now) }
            result.lost += carried.lost.count
        }
        for (field, link) in loserState.fields.sorted(by: { $0.key < $1.key }) {
            guard let hash = field.firstIndex(of: "#") else { continue }
            let carried = RecordMerge.apply(
                WireChange(record: survivor, entity: entity, kind: .update, values: [field: link.value]),
                stamps: [field: link.stamp], to: &survivorState)
            guard !carried.applied.isEmpty else { continue }
            if let memberURI = linkMember(entity, field) { workspace.addLinkOwner(survivor, field: field, member: memberURI) }
            let member = String(field[field.index(after: hash)...])
            last = workspace.appendLog(
                WireChange(
                    record: survivor, entity: entity, kind: link.value == .bool(true) ? .link : .unlink,
                    values: [String(field[..<hash]): .text(member)],
                    stamps: [WireChange.deleteStampKey: link.stamp.description]), schemaVersion: schemaVersion)
        }
        if let survivorState, survivorState != survivorBefore { workspace.setRecord(survivor, survivorState) }
        // The links naming the loser (fields of other records) name the survivor, each with
        // its stamp, logged: replicas drop the loser's rows with its delete, and link the
        // survivor as the server does, not as each one's rows happened to be.
        if linkMemberEntities.contains(entity), let survivorID = RecordURI(survivor)?.id {
            for (owner, field) in workspace.linkOwners(of: loser) where owner != loser {
                guard let ownerState = try workspace.record(owner), !ownerState.isDeleted, let link = ownerState.fields[field],
                    link.value == .bool(true), let hash = field.firstIndex(of: "#")
                else { continue }
                let moved = field[..<hash] + "#" + survivorID
                var state: RecordState? = ownerState
                let carried = RecordMerge.apply(
                    WireChange(record: owner, entity: ownerState.entity, kind: .update, values: [moved: .bool(true)]),
                    stamps: [moved: link.stamp], to: &state)
                guard !carried.applied.isEmpty, let state else { continue }
                workspace.setRecord(owner, state)
                workspace.addLinkOwner(owner, field: moved, member: survivor)
                try logLink(owner, ownerState.entity, field: moved, linked: true, stamp: link.stamp)
            }
        }
        let stamp = UniqueMerge.mergeStamp(loser: loserState, now: now)
        var deleted: RecordState? = loserState
        _ = RecordMerge.apply(WireChange(record: loser, entity: entity, kind: .delete), stamps: [WireChange.deleteStampKey: stamp], to: &deleted)
        if let deleted { workspace.setRecord(loser, deleted) }
        last = workspace.appendLog(
            WireChange(
                record: loser, entity: entity, kind: .delete, stamps: [WireChange.deleteStampKey: stamp.description],
                mergedInto: survivor), schemaVersion: schemaVersion)
        workspace.setMerged(loser, MergedRecord(survivor: survivor, stamp: stamp, state: loserState))
        // The survivor holds its values, the carried ones too (which may meet a third record).
        try settle(survivor, entity, old: unique.keys(of: survivorBefore), new: unique.keys(of: survivorState), claimAll: true)
    }
}

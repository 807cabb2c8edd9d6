import TandemConflicts
import TandemSchema
import TandemWire

/// Many-to-many links: a link change applied, and the links a delete or a revival of a
/// record settles, in the log.
extension PushRun {
    /// A link or an unlink (change `index`, its record already redirected from a merged-away
    /// one when `redirected`): one field of its record, `<relationship>#<member>`, true while
    /// linked, merged by stamp like any value (the later wins).
    mutating func applyLink(
        _ change: WireChange, sent: WireChange, field: String, stamp: HLCTimestamp, at index: Int,
        redirected: Bool
    ) throws {
        var change = change, field = field, redirected = redirected
        var state = try workspace.record(change.record)
        if let existing = state, existing.entity != change.entity {
            throw PushRefusal.wrongEntity(record: change.record, stored: existing.entity, sent: change.entity)
        }
        // The member: a record merged into another is linked as its survivor.
        guard let (relationship, member) = change.values.first, case .text(var id) = member,
            let destination = schema.entity(named: change.entity)?.relationship(named: relationship)?.destination
        else { return }
        var memberURI = "tandem://\(datasetName)/\(destination)/\(id)"
        if unique.hasUniqueValues(destination), let survivor = try survivor(of: memberURI, stampedAt: stamp) {
            memberURI = survivor
            id = RecordURI(memberURI)?.id ?? id
            change.values = [relationship: .text(id)]
            field = relationship + "#" + id
            redirected = true
            isEcho = false
        }
        // A link to a record deleted here (or never pushed) loses to the delete, as an
        // update of it would: replicas clear a record's links when they apply its
        // delete, so the link would live only where it was made.
        // So does a link older than the member's newest delete, though the member lives
        // again: replicas dropped the link with the delete.
        if change.kind == .link {
            let memberState = try workspace.record(memberURI)
            var losesTo: String?  // the winning delete's stamp
            // The end that is deleted (`.some(nil)`: one the server never had).
            let gone = [state, memberState].first(where: { $0?.isDeleted ?? true })
            if let gone {
                losesTo = gone?.deleted?.description ?? ""
            } else if let deleted = memberState?.deleted, deleted >= stamp,
                // Unless the owner holds this link already, made after that delete
                // (elsewhere): this older one changes nothing, and its maker keeps
                // the row the newer one keeps everywhere.
                !(state?.holds(field, .bool(true), newerThan: deleted) ?? false)
            {
                losesTo = deleted.description
            }
            if let losesTo {
                // Newer than the delete it meets, the link is kept (neither applied nor
                // logged) and comes back with the record (``linksRevived``), as when it
                // arrived before the delete: arrival order cannot matter.
                if let owner = state, let deleted = gone??.deleted, stamp > deleted {
                    var kept: RecordState? = owner
                    _ = RecordMerge.apply(
                        WireChange(record: change.record, entity: change.entity, kind: .update, values: [field: .bool(true)]),
                        stamps: [field: stamp], to: &kept)
                    if let kept, kept != owner {
                        workspace.setRecord(change.record, kept)
                        workspace.addLinkOwner(change.record, field: field, member: memberURI)
                    }
                }
                let lost = LostValue(
                    attribute: field, value: .bool(true), stamp: stamp.description,
                    winningValue: .null, winningStamp: losesTo, toDelete: true)
                workspace.recordLost(lost, record: change.record, position: nil, at: now)
                outcome(index, position: nil, applied: [], lost: [lost])
                return
            }
        }
        let before = state
        let merged = RecordMerge.apply(
            WireChange(record: change.record, entity: change.entity, kind: .update, values: [field: .bool(change.kind == .link)]),
            stamps: [field: stamp], to: &state)
        if let state, state != before { workspace.setRecord(change.record, state) }
        var position: Int64?
        if !merged.applied.isEmpty {
            position = Self.log(change, whole: !redirected, index: index, sent: sent, created: nil, canonical: canonical, schemaVersion: schemaVersion, to: &workspace)
            last = position!
            if change.kind == .link { workspace.addLinkOwner(change.record, field: field, member: memberURI) }
        }
        for lost in merged.lost { workspace.recordLost(lost, record: change.record, position: position, at: now) }
        outcome(index, position: position, applied: merged.applied.keys.sorted(), lost: merged.lost)
    }

    /// The member a link field of an `entity` record names.
    func linkMember(_ entity: String, _ field: String) -> String? {
        guard let hash = field.firstIndex(of: "#"),
            let destination = schema.entity(named: entity)?.relationship(named: String(field[..<hash]))?.destination
        else { return nil }
        return "tandem://\(datasetName)/\(destination)/\(field[field.index(after: hash)...])"
    }
    mutating func logLink(_ owner: String, _ entity: String, field: String, linked: Bool, stamp: HLCTimestamp) throws {
        guard let hash = field.firstIndex(of: "#") else { return }
        last = workspace.appendLog(
            WireChange(
                record: owner, entity: entity, kind: linked ? .link : .unlink,
                values: [String(field[..<hash]): .text(String(field[field.index(after: hash)...]))],
                stamps: [WireChange.deleteStampKey: stamp.description]), schemaVersion: schemaVersion)
        isEcho = false
    }
    /// Record `uri` has a newer delete, stamped `deleted`: links older than it go (a link
    /// newer than the delete stays, as any value does, and comes back with the record).
    /// Each is logged as an unlink for the replicas that pull the link after applying the
    /// delete (the replica that made the delete, say, when it had not seen the link).
    mutating func linksDied(_ uri: String, _ entity: String, before: RecordState?, deleted: HLCTimestamp) throws {
        if linkOwnerEntities.contains(entity), let before {
            // Its own link fields: the merge dropped those older than the delete.
            for (field, link) in before.fields.sorted(by: { $0.key < $1.key })
            where field.contains("#") && link.value == .bool(true) && link.stamp < deleted {
                try logLink(uri, entity, field: field, linked: false, stamp: deleted)
            }
        }
        guard linkMemberEntities.contains(entity) else { return }
        for (owner, field) in workspace.linkOwners(of: uri) {
            guard let ownerState = try workspace.record(owner), let link = ownerState.fields[field],
                link.value == .bool(true), link.stamp < deleted
            else { continue }
            var state: RecordState? = ownerState
            let unlinked = RecordMerge.apply(
                WireChange(record: owner, entity: ownerState.entity, kind: .update, values: [field: .bool(false)]),
                stamps: [field: deleted], to: &state)
            if let state, state != ownerState { workspace.setRecord(owner, state) }
            if !unlinked.applied.isEmpty { try logLink(owner, ownerState.entity, field: field, linked: false, stamp: deleted) }
        }
    }
    /// Newer than both ends' newest deletes: a link every replica dropped with a delete
    /// (a merge's too) stays out.
    func newer(_ stamp: HLCTimestamp, than a: RecordState, _ b: RecordState) -> Bool {
        a.deleted.map { stamp > $0 } ?? true && b.deleted.map { stamp > $0 } ?? true
    }
    /// Record `uri` lives again (re-inserted after its delete, or restored because a
    /// delete lost to a newer insert): replicas that applied the delete dropped its links,
    /// so those that still hold (both ends live) are logged again.
    mutating func linksRevived(_ uri: String, _ entity: String, state: RecordState) throws {
        if linkOwnerEntities.contains(entity) {
            for (field, link) in state.fields.sorted(by: { $0.key < $1.key }) where field.contains("#") && link.value == .bool(true) {
                guard let member = linkMember(entity, field), let memberState = try workspace.record(member), !memberState.isDeleted,
                    newer(link.stamp, than: state, memberState)
                else { continue }
                try logLink(uri, entity, field: field, linked: true, stamp: link.stamp)
            }
        }
        guard linkMemberEntities.contains(entity) else { return }
        for (owner, field) in workspace.linkOwners(of: uri) {
            guard let ownerState = try workspace.record(owner), !ownerState.isDeleted, let link = ownerState.fields[field],
                link.value == .bool(true), newer(link.stamp, than: state, ownerState)
            else { continue }
            try logLink(owner, ownerState.entity, field: field, linked: true, stamp: link.stamp)
        }
    }
}

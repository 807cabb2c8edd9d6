import GRDB
import TandemSchema
import TandemWire

extension ChangeApplier {
    /// Why a snapshot's link cannot be applied yet: one of its records comes in a later page
    /// (a snapshot is in URI order, and a link names records of any entity). `nil` when both
    /// are here, or when the change is no link. The bootstrap sets such a link aside in the
    /// quarantine and applies it once every page is in (a link applied now to a missing record
    /// would be taken for one that lost to a delete).
    ///
    /// ```swift
    /// if let reason = try applier.linkWaitsForRecords(entry.change, db) { try applier.quarantine(entry, entry.change, reason, db, &outcome) }
    /// ```
    func linkWaitsForRecords(_ change: WireChange, _ db: Database) throws -> String? {
        guard change.kind == .link, change.values.count == 1, let (name, member) = change.values.first, case .text(let target) = member,
            let uri = RecordURI(change.record), let entity = schema.entity(named: change.entity),
            let relationship = entity.relationship(named: name)
        else { return nil }
        for (table, id) in [(entity.name, uri.id), (relationship.destination, target)] {
            let present = try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM \(q(table)) WHERE \(Self.idColumn) = ?"), arguments: [id]) ?? false
            if !present { return Self.bootstrapLinkReason }
        }
        return nil
    }

    /// Makes the stored row of `change`'s record older than anything the server holds (its
    /// stamps all zero), so that the snapshot's insert or delete of it wins whole, as the
    /// server's state is the truth for a record with no unpushed edit. Nothing when the store
    /// does not have it.
    ///
    /// ```swift
    /// try applier.yieldToServer(change, db)
    /// try applier.apply(entry, db, into: &outcome)
    /// ```
    func yieldToServer(_ change: WireChange, _ db: Database) throws {
        guard let uri = RecordURI(change.record), let table = columns[change.entity] != nil ? q(change.entity) : nil else { return }
        try db.cachedStatement(sql: "UPDATE \(table) SET \(Self.stampColumn) = ? WHERE \(Self.idColumn) = ?")
            .execute(arguments: ["{\"*\":\"\(HLCTimestamp.zero.description)\"}", uri.id])
    }

    /// The quarantine reason of a snapshot's link set aside until every page is in.
    static let bootstrapLinkReason = "a link of the snapshot whose records come in later pages: applied once the bootstrap has every record"
}

import GRDB
import Tandem
import TandemSchema
import TandemSQLite
import TandemWire

/// A server's value that won over a pushed one (last writer wins), taken into the local row
/// when the row still holds the pushed value under its stamp.
///
/// Usually the log brings the winner after the push, and this only writes early what the
/// pull writes anyway. Not always: a value this store wrote earlier, stamped by a clock the
/// server no longer agrees with (its clock was set back), wins over the store's later edit
/// re-stamped with the server's time, and that earlier value is already behind the store's
/// cursor: without this the row kept the edit that lost, for good.
///
/// ```swift
/// if let winner = ServerWinner(record: change.record, entity: change.entity, lost: value) { try winner.adopt(db) }
/// ```
struct ServerWinner: Sendable {
    var entity: String
    var id: String
    var column: String
    var value: WireValue
    var stamp: HLCTimestamp
    /// The stamp of the pushed value that lost.
    var lostStamp: HLCTimestamp
    /// The entity a to-one column points at: a winning reference to a record merged into
    /// another is taken as the survivor, as the merge re-pointed references here (the server
    /// keeps the reference as it was sent).
    var destination: String?

    /// `nil` for what is not a plain column of a record (a link field, the record itself).
    /// `schema` names the column's destination when it is a to-one reference.
    init?(record: String, entity: String, lost: LostValue, schema: Schema? = nil) {
        guard !lost.attribute.contains("#"), lost.attribute != WireChange.deleteStampKey, let uri = RecordURI(record),
            let stamp = HLCTimestamp(lost.winningStamp), let lostStamp = HLCTimestamp(lost.stamp)
        else { return nil }
        self.entity = entity
        id = uri.id
        column = lost.attribute
        value = lost.winningValue
        self.stamp = stamp
        self.lostStamp = lostStamp
        if let relationship = schema?.entity(named: entity)?.relationship(named: lost.attribute), !relationship.isToMany {
            destination = relationship.destination
        }
    }

    /// Writes the winner over the row's value when the row still holds the pushed one (a
    /// later local edit stands, and is pushed next). As a pulled value is written: its stamp
    /// kept, author `sync`, nothing pushed. Not when another record here holds the value under
    /// a unique index: the pull and the server's merges decide that one (a failed write would
    /// fail every sync).
    ///
    /// - Throws: ``DatabaseError`` when the store cannot be written.
    func adopt(_ db: Database) throws {
        let table = SQLName.quote(entity), id = ChangeApplier.idColumn, stampColumn = ChangeApplier.stampColumn
        guard let text = try String.fetchOne(db, sql: "SELECT \(stampColumn) FROM \(table) WHERE \(id) = ?", arguments: [self.id]),
            var stamps = ChangeApplier.stamps(text), (stamps[column] ?? stamps[WireChange.deleteStampKey]) == lostStamp,
            try db.columns(in: entity).contains(where: { $0.name == column })
        else { return }
        stamps[column] = stamp
        var value = self.value
        if let destination, case .text(let target) = value, let survivor = try SyncStore.survivor(entity: destination, id: target, db) {
            value = .text(survivor)
        }
        try db.makeStatement(sql: "UPDATE OR IGNORE \(table) SET \(SQLName.quote(column)) = ?, \(stampColumn) = ? WHERE \(id) = ?").executeBound { bind in
            bind.value(value)  // text whole, a NUL inside included
            bind.text(ChangeApplier.json(stamps.mapValues(\.description)))
            bind.text(self.id)
        }
    }
}

import GRDB
import Tandem
import TandemSchema
import TandemWire

/// A pushed link the server answered lost to a delete (`toDelete`): its maker drops the
/// join row, as every other replica dropped it with the delete (or never had it).
///
/// A link older than its member's newest delete loses on the server even when the member
/// lives again (a newer insert brought it back without its old links), and the replica that
/// made the link pulls nothing that removes its row: without this it kept the link for good.
///
/// ```swift
/// if let lost = LostLink(change: change, lost: value, schema: schema) { try lost.drop(db) }
/// ```
struct LostLink: Sendable {
    var table: String
    var owner: String
    var member: String

    /// `nil` when `lost` is not a link that lost to a delete, or `change` names no
    /// many-to-many relationship of this schema.
    init?(change: WireChange, lost: LostValue, schema: Schema) {
        guard lost.toDelete, change.kind == .link, let hash = lost.attribute.firstIndex(of: "#"), let uri = RecordURI(change.record),
            let entity = schema.entity(named: change.entity), let relationship = entity.relationship(named: String(lost.attribute[..<hash])),
            case .joinTable(let table, "source", _) = schema.storage(of: relationship, in: entity)
        else { return nil }
        self.table = table
        owner = uri.id
        member = String(lost.attribute[lost.attribute.index(after: hash)...])
    }

    /// Deletes the join row (author `sync`: nothing is pushed), and the copy of it that
    /// applying a merge moved to the survivor before the link was pushed
    /// (`tandem_sync_moved_link`): the server did not give it to the survivor, so no replica
    /// has it there.
    ///
    /// - Throws: ``DatabaseError`` when the store cannot be written.
    func drop(_ db: Database) throws {
        try db.execute(sql: "DELETE FROM \(SQLName.quote(table)) WHERE source = ? AND target = ?", arguments: [owner, member])
        guard
            let moved = try Row.fetchOne(
                db, sql: "SELECT to_source, to_target FROM tandem_sync_moved_link WHERE link_table = ? AND source = ? AND target = ?",
                arguments: [table, owner, member])
        else { return }
        try db.execute(sql: "DELETE FROM \(SQLName.quote(table)) WHERE source = ? AND target = ?", arguments: [moved[0] as String, moved[1] as String])
        try db.execute(sql: "DELETE FROM tandem_sync_moved_link WHERE link_table = ? AND source = ? AND target = ?", arguments: [table, owner, member])
    }
}

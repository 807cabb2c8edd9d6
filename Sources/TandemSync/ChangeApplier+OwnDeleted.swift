import Foundation
import GRDB
import Tandem
import TandemWire
import TandemConflicts

/// Values of this store's own, newer than a pulled delete that took their row: the server
/// may have applied them to the record made again (same id) after the delete, over the
/// re-insert's older values. The pulled delete takes the row and their stamps, so when the
/// re-insert comes, nothing here would say that its values lost; these rows say it.
///
/// Kept in `tandem_sync_deleted_own(record, attribute, value, stamp)` (wire JSON), written by a
/// pulled delete, read and dropped by a pulled insert of the same record, and emptied once a
/// pull reaches the log's head (every later entry of the record has been seen by then).
extension ChangeApplier {
    /// Set once a row of `tandem_sync_deleted_own` exists; a class so every page of a pull
    /// sees what an earlier page wrote.
    final class OwnDeletedFlag {
        var any = false
    }

    /// Before a pulled delete of a row: keeps its columns this store stamped after `delete`
    /// and has pushed (`local` is the row's stamps; unpushed edits got the delete rules).
    func keepOwnValues(newerThan delete: HLCTimestamp, of record: String, _ entity: String, _ uuid: String,
                       stamps local: [String: HLCTimestamp], unpushed mine: [String: HLCTimestamp], _ db: Database) throws {
        guard node != 0 else { return }
        let columns = local.filter { $0.key != "*" && $0.value.node == node && $0.value > delete && mine[$0.key] == nil }
        guard !columns.isEmpty, let row = try rowState(entity, uuid, db) else { return }
        for (column, stamp) in columns {
            guard let value = row.values[column] else { continue }
            try db.cachedStatement(sql: "INSERT OR REPLACE INTO tandem_sync_deleted_own (record, attribute, value, stamp) VALUES (?, ?, ?, ?)")
                .execute(arguments: [record, column, value.jsonText, stamp.description])
            ownDeleted.any = true
        }
    }

    /// After a pulled insert of a record this store did not hold: logs each of its values that
    /// lost to a value of this store's kept by ``keepOwnValues(newerThan:of:_:_:stamps:unpushed:_:)``
    /// (that value is pulled back after the insert), and forgets them.
    func logValuesLosingToOwnDeleted(_ record: String, values: [String: WireValue], stamp remoteStamp: (String) -> HLCTimestamp?,
                                     _ db: Database, _ outcome: inout Outcome) throws {
        let kept = try Row.fetchAll(db.cachedStatement(sql: "SELECT attribute, value, stamp FROM tandem_sync_deleted_own WHERE record = ?"), arguments: [record])
        guard !kept.isEmpty else { return }
        for row in kept {
            let (column, json, text): (String, String, String) = (row[0], row[1], row[2])
            guard let remote = values[column], let stamp = HLCTimestamp(text), let incoming = remoteStamp(column),
                  stamp > incoming, remote.jsonText != json else { continue }
            try SyncStore.recordConflict(SyncConflict(at: now, record: record, attribute: column, localValue: json, localStamp: text,
                                                      remoteValue: remote.jsonText, remoteStamp: incoming.description,
                                                      winner: .local, rule: ConflictRule.lastWriterWins.rawValue), db)
            outcome.conflicts += 1
        }
        try db.cachedStatement(sql: "DELETE FROM tandem_sync_deleted_own WHERE record = ?").execute(arguments: [record])
    }

    /// Forgets every kept value: the pull has seen the whole log.
    func forgetOwnDeleted(_ db: Database) throws {
        guard ownDeleted.any else { return }
        try db.execute(sql: "DELETE FROM tandem_sync_deleted_own")
        ownDeleted.any = false
    }
}

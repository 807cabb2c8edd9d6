import Foundation
import GRDB
import TandemSQLite
import TandemSchema
import TandemWire

/// ``PushStore`` on the SQLite writer connection, inside the push's savepoint: batches read
/// with point lookups on one prepared statement per kind of key (in-process, a larger query
/// gains nothing), and written in a savepoint of their own so a refused write leaves nothing.
/// The statements run once per change are bound straight to SQLite (TandemSQLite) and stepped
/// without GRDB's per-statement checks: these tables have no transaction observer.
struct SQLitePushStore: PushStore {
    let db: Database
    let dataset: Int64
    /// The dataset's ``CompactionState/tombstonesBefore``, read with its row as the push began.
    var tombstones: Int64 = 0
    /// The bytes of the log entries and lost values written (they count in the owner's
    /// stored bytes).
    var loggedBytes: Int64 = 0

    func lastLogPosition() throws -> Int64 {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT MAX(position) FROM log WHERE dataset_id = ?"), arguments: [dataset]) ?? 0
    }

    func tombstonesBefore() -> Int64 { tombstones }

    func read(_ keys: PushKeys) throws -> PushReads {
        var reads = PushReads()
        if !keys.records.isEmpty {
            let statement = try db.cachedStatement(sql: "SELECT state FROM records WHERE dataset_id = ? AND uri = ?")
            for uri in keys.records {
                let state = try statement.withFirstBlob({ bind in
                    bind.int64(dataset); bind.text(uri)
                }) { try RecordState(stored: $0) }
                if let state { reads.records[uri] = state }
            }
        }
        if !keys.merged.isEmpty {
            let statement = try db.cachedStatement(sql: "SELECT survivor, stamp, state, remade FROM merged_records WHERE dataset_id = ? AND uri = ?")
            for uri in keys.merged {
                guard let row = try Row.fetchOne(statement, arguments: [dataset, uri]), let stamp = HLCTimestamp(row[1] as String) else { continue }
                let state = try (row[2] as Data?).map { try RecordState(stored: $0) }
                reads.merged[uri] = MergedRecord(survivor: row[0], stamp: stamp, state: state, remade: (row[3] as String?).flatMap(HLCTimestamp.init))
            }
        }
        if !keys.linkOwners.isEmpty {
            // With the owners' records: a delete of their member reads them next.
            let statement = try db.cachedStatement(
                sql: """
                    SELECT link_members.owner, link_members.field, records.state FROM link_members
                    LEFT JOIN records ON records.dataset_id = link_members.dataset_id AND records.uri = link_members.owner
                    WHERE link_members.dataset_id = ? AND link_members.member = ? ORDER BY link_members.owner, link_members.field
                    """)
            for member in keys.linkOwners {
                let rows = try Row.fetchAll(statement, arguments: [dataset, member])
                guard !rows.isEmpty else { continue }
                reads.linkOwners[member] = rows.map { LinkOwner(owner: $0[0], field: $0[1]) }
                for row in rows {
                    if let state = row[2] as Data? { reads.records[row[0]] = try RecordState(stored: state) }
                }
            }
        }
        if !keys.unique.isEmpty {
            let statement = try db.cachedStatement(sql: "SELECT uri FROM unique_values WHERE dataset_id = ? AND entity = ? AND key = ?")
            for slot in keys.unique {
                if let holder = try String.fetchOne(statement, arguments: [dataset, slot.entity, slot.key]) { reads.unique[slot] = holder }
            }
        }
        return reads
    }

    mutating func write(_ writes: PushWrites) throws -> PushKeys {
        var refused = PushKeys()
        var lostBytes: Int64 = 0
        try db.inSavepoint {
            try writeRecords(writes.records, refused: &refused)
            try writeUnique(writes.unique, refused: &refused)
            guard refused.isEmpty else { return .rollback }
            try writeMerges(writes.merged)
            for (member, link) in writes.linkOwners {
                try db.cachedStatement(sql: "INSERT OR IGNORE INTO link_members(dataset_id, member, owner, field) VALUES (?, ?, ?, ?)")
                    .execute(arguments: [dataset, member, link.owner, link.field])
            }
            try writeLog(writes.log)
            for lost in writes.lost {
                let data = WireJSON.data { $0.append(lost.lost) }
                lostBytes += Int64(data.count)
                try db.cachedStatement(sql: "INSERT INTO lost_values(dataset_id, uri, position, lost, at) VALUES (?, ?, ?, ?, ?)")
                    .execute(arguments: [dataset, lost.record, lost.position, data, lost.at])
            }
            return .commit
        }
        if refused.isEmpty { loggedBytes += writes.log.reduce(lostBytes) { $0 + Int64($1.json.count) } }
        return refused
    }

    /// New records inserted unless they exist (then refused), the others replaced.
    private func writeRecords(_ records: [RecordWrite], refused: inout PushKeys) throws {
        guard !records.isEmpty else { return }
        let insert = try db.cachedStatement(sql: "INSERT INTO records(dataset_id, uri, state) VALUES (?, ?, ?) ON CONFLICT DO NOTHING")
        let replace = try db.cachedStatement(sql: "INSERT OR REPLACE INTO records(dataset_id, uri, state) VALUES (?, ?, ?)")
        for record in records {
            let written = try (record.isNew ? insert : replace).stepBound { bind in
                bind.int64(dataset)
                bind.text(record.uri)
                record.state.withUnsafeBytes { bind.blob($0) }
            }
            if written == 0 { refused.records.insert(record.uri) }
        }
    }

    /// Claims (refused when another record holds the value) and releases, in order.
    private func writeUnique(_ writes: [UniqueWrite], refused: inout PushKeys) throws {
        guard !writes.isEmpty else { return }
        let claim = try db.cachedStatement(sql: "INSERT INTO unique_values(dataset_id, entity, key, uri) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING")
        let release = try db.cachedStatement(sql: "DELETE FROM unique_values WHERE dataset_id = ? AND entity = ? AND key = ? AND uri = ?")
        let holder = try db.cachedStatement(sql: "SELECT uri FROM unique_values WHERE dataset_id = ? AND entity = ? AND key = ?")
        for write in writes {
            let changed = try (write.claim ? claim : release).stepBound { bind in
                bind.int64(dataset)
                bind.text(write.slot.entity)
                bind.text(write.slot.key)
                bind.text(write.record)
            }
            if write.claim, changed == 0, try String.fetchOne(holder, arguments: [dataset, write.slot.entity, write.slot.key]) != write.record {
                refused.unique.insert(write.slot)
            }
        }
    }

    private func writeMerges(_ merges: [(uri: String, merged: MergedRecord?)]) throws {
        for (loser, merged) in merges {
            if let merged {
                try db.cachedStatement(sql: "INSERT OR REPLACE INTO merged_records(dataset_id, uri, survivor, stamp, state, remade) VALUES (?, ?, ?, ?, ?, ?)")
                    .execute(arguments: [
                        dataset, loser, merged.survivor, merged.stamp.description, merged.state.map { Data($0.binaryBytes()) },
                        merged.remade?.description,
                    ])
            } else {
                try db.cachedStatement(sql: "DELETE FROM merged_records WHERE dataset_id = ? AND uri = ?").execute(arguments: [dataset, loser])
            }
        }
    }

    private func writeLog(_ log: [LogWrite]) throws {
        guard !log.isEmpty else { return }
        let insert = try db.cachedStatement(sql: "INSERT INTO log(dataset_id, position, schema_version, change) VALUES (?, ?, ?, ?)")
        for entry in log {
            _ = try insert.stepBound { bind in
                bind.int64(dataset)
                bind.int64(entry.position)
                bind.int64(Int64(entry.schemaVersion))
                entry.json.withUnsafeBytes { bind.blob($0) }
            }
        }
    }
}

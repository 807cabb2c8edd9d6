import Foundation
import TandemWire

extension MemoryServerStorage {
    /// ``TandemServer/PushStore`` on a copy of one dataset: what a push writes is kept only
    /// when every write holds, as in a transaction.
    struct PushStore: TandemServer.PushStore {
        var dataset: Dataset
        var log: [LogEntry]
        var lost: [LostWrite] = []
        var loggedBytes: Int64 = 0

        func lastLogPosition() -> Int64 { log.last?.position ?? 0 }
        func tombstonesBefore() -> Int64 { dataset.tombstonesBefore }

        func read(_ keys: PushKeys) -> PushReads {
            var reads = PushReads()
            for uri in keys.records { reads.records[uri] = dataset.records[uri] }
            for uri in keys.merged { reads.merged[uri] = dataset.merged[uri] }
            for member in keys.linkOwners {
                guard let owners = dataset.linkOwners[member]?.sorted() else { continue }
                reads.linkOwners[member] = owners
                // With their records, as the SQLite storage answers.
                for link in owners { reads.records[link.owner] = dataset.records[link.owner] }
            }
            for slot in keys.unique { reads.unique[slot] = dataset.unique[slot] }
            return reads
        }

        mutating func write(_ writes: PushWrites) throws -> PushKeys {
            var next = dataset
            var refused = PushKeys()
            for record in writes.records {
                if record.isNew && next.records[record.uri] != nil {
                    refused.records.insert(record.uri)
                    continue
                }
                next.records[record.uri] = try RecordState(stored: Data(record.state))
            }
            for write in writes.unique {
                let holder = next.unique[write.slot]
                if write.claim {
                    if let holder, holder != write.record { refused.unique.insert(write.slot) } else { next.unique[write.slot] = write.record }
                } else if holder == write.record {
                    next.unique[write.slot] = nil
                }
            }
            guard refused.isEmpty else { return refused }
            for (uri, merged) in writes.merged { next.merged[uri] = merged }
            for (member, link) in writes.linkOwners { next.linkOwners[member, default: []].insert(link) }
            var nextLog = log
            for entry in writes.log {
                let change = try WireJSONReader.change(Data(entry.json))
                nextLog.append(LogEntry(position: entry.position, change: change, schemaVersion: entry.schemaVersion))
            }
            lost += writes.lost
            loggedBytes += writes.log.reduce(0) { $0 + Int64($1.json.count) }
            loggedBytes += writes.lost.reduce(0) { total, lost in total + Int64(WireJSON.data { $0.append(lost.lost) }.count) }
            dataset = next
            log = nextLog
            return refused
        }
    }
}

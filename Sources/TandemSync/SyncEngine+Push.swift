import Foundation
import GRDB
import Tandem
import TandemSchema
import TandemWire

extension SyncEngine {
    struct PushResult {
        var pushed = 0
        var conflicts = 0
        /// Local changes the server refused, kept in the quarantine with its reason.
        var quarantined = 0
    }

    /// Pushes one batch and logs the values that lost. A batch the server refuses as invalid
    /// or too large is split in two (each half with its own key, derived from the batch's);
    /// a single change it refuses is quarantined with the server's reason instead of
    /// blocking every later sync. The local row keeps its value.
    func send(_ batch: [WireChange], key: String, schemaVersion: Int) async throws -> PushResult {
        let body = WireJSON.data { $0.append(PushRequest(schemaVersion: schemaVersion, changes: batch)) }
        let response: TransportResponse
        do {
            response = try await call("POST", "/v1/datasets/\(dataset)/push", body: body, headers: ["Idempotency-Key": key])
        } catch let error as SyncError where error.code == .rejected && [400, 413, 422].contains(error.status ?? 0) {
            guard batch.count > 1 else {
                let now = clock()
                try store { db in
                    try SyncStore.quarantine(WireJSON.data { $0.append(batch[0]) }.utf8Text, position: nil,
                                             reason: "the server refused this local change: \(error.message)", at: now, db)
                }
                logger.warning("the server refused a local change; quarantined", metadata: ["record": "\(batch[0].record)", "error": "\(error.message)"])
                return PushResult(quarantined: 1)
            }
            let half = batch.count / 2
            var result = try await send(Array(batch[..<half]), key: key + ".a", schemaVersion: schemaVersion)
            let second = try await send(Array(batch[half...]), key: key + ".b", schemaVersion: schemaVersion)
            result.pushed += second.pushed
            result.conflicts += second.conflicts
            result.quarantined += second.quarantined
            return result
        }
        let answer = try Self.decode(PushResponse.self, response)
        guard answer.outcomes.count == batch.count else {
            throw SyncError(.invalidResponse, "the server answered \(answer.outcomes.count) outcomes for \(batch.count) changes")
        }
        let now = clock()
        let lost = try store { db in
            var count = 0
            for (change, outcome) in zip(batch, answer.outcomes) {
                for value in outcome.lost {
                    let rule = change.kind == .delete ? "insertAfterDelete" : (value.winningValue == .null ? "deleteWins" : "lastWriterWins")
                    try SyncStore.recordConflict(SyncConflict(at: now, record: change.record, attribute: value.attribute,
                                                              localValue: value.value.jsonText, localStamp: value.stamp,
                                                              remoteValue: value.winningValue.jsonText, remoteStamp: value.winningStamp,
                                                              winner: .server, rule: rule), db)
                    count += 1
                }
            }
            return count
        }
        return PushResult(pushed: batch.count, conflicts: lost)
    }

    /// Pushes every journaled local change after the `sync` reader's acknowledged token, in
    /// ranges of transactions split into batches. A range's bounds are saved before its
    /// first batch is sent, so a retry (after a crash or a lost answer) sends the same
    /// batches with the same idempotency keys; the range is acknowledged after the last.
    func push(schemaVersion: Int) async throws -> PushResult {
        var result = try await pushSnapshotIfNeeded(schemaVersion: schemaVersion)
        while true {
            let acknowledged = try acknowledgedToken()
            let range = try nextRange(after: acknowledged)
            guard let range else { return result }
            let transactions = try history(after: range.from, through: range.through)
            let plan = PushPlanner.plan(transactions)
            if plan.unsupported > 0 {
                logger.warning("many-to-many links are not synced by protocol v1", metadata: ["links": "\(plan.unsupported)"])
            }
            let batches = PushPlanner.chunks(plan.changes, count: configuration.pushBatchSize, bytes: configuration.pushBatchBytes)
            let clientID = try read { db in try SyncStore.value("clientID", db) } ?? "client"
            var sent = batches.prefix(range.chunk).reduce(0) { $0 + $1.count }
            // Up to `pushesInFlight` batches at once (they touch different records); the
            // saved batch index moves only past a fully answered window, so a retry resends
            // from there with the same keys.
            var index = range.chunk
            while index < batches.count {
                let window = index..<min(index + max(configuration.pushesInFlight, 1), batches.count)
                let outcomes = try await withThrowingTaskGroup(of: PushResult.self) { group in
                    for position in window {
                        let key = "\(clientID):v\(schemaVersion):\(range.from.rawValue)-\(range.through.rawValue):\(position)"
                        let batch = batches[position]
                        group.addTask { try await self.send(batch, key: key, schemaVersion: schemaVersion) }
                    }
                    var outcomes: [PushResult] = []
                    for try await outcome in group { outcomes.append(outcome) }
                    return outcomes
                }
                index = window.upperBound
                try store { db in try SyncStore.set("inflight", "\(range.from.rawValue)-\(range.through.rawValue)-\(index)", db) }
                for outcome in outcomes {
                    result.conflicts += outcome.conflicts
                    result.pushed += outcome.pushed
                    result.quarantined += outcome.quarantined
                }
                sent += window.reduce(0) { $0 + batches[$1].count }
                configuration.progress?(.pushed(changes: sent, of: plan.changes.count))
            }
            do {
                try container.acknowledgeHistory(through: range.through, reader: SyncStore.reader)
            } catch {
                throw SyncError(.store, "the store failed: \(error)")
            }
            try store { db in try SyncStore.set("inflight", nil, db) }
        }
    }

    /// On the first sync, rows the journal has no insert for — history deleted before sync
    /// was set up, or rows older than the journal (a store upgraded from format 1) — are
    /// pushed as inserts with their stored stamps, so no record stays behind.
    func pushSnapshotIfNeeded(schemaVersion: Int) async throws -> PushResult {
        var result = PushResult()
        guard try read({ db in try SyncStore.value("snapshot", db) }) == nil else { return result }
        let clientID = try read { db in try SyncStore.value("clientID", db) } ?? "client"
        for entity in container.schema.entities {
            let columns = entity.columns.filter { $0.role != .primaryKey }.map(\.name)
            let table = SQLName.quote(entity.name)
            let changes: [WireChange] = try read { db in
                let rows = try Row.fetchAll(db, sql: """
                    SELECT "#id", "#hlc"\(columns.map { ", " + SQLName.quote($0) }.joined()) FROM \(table)
                    WHERE "#id" NOT IN (SELECT record FROM tandem_history_change WHERE entity = ? AND kind = 'insert')
                    ORDER BY "#id"
                    """, arguments: [entity.name])
                return rows.map { row in
                    let id: String = row[0]
                    let stamps = (row[1] as String?).flatMap(ChangeApplier.stamps) ?? [:]
                    var values: [String: WireValue] = [:]
                    var columnStamps: [String: String] = [:]
                    for (index, column) in columns.enumerated() {
                        values[column] = WireValue(row[index + 2] as DatabaseValue)
                        columnStamps[column] = (stamps[column] ?? stamps["*"] ?? .zero).description
                    }
                    return WireChange(record: "tandem://\(container.dataset)/\(entity.name)/\(id)", entity: entity.name, kind: .insert,
                                      values: values, stamps: columnStamps)
                }
            }
            guard !changes.isEmpty else { continue }
            logger.info("pushing records the journal has no history for", metadata: ["entity": "\(entity.name)", "records": "\(changes.count)"])
            for (index, batch) in PushPlanner.chunks(changes, count: configuration.pushBatchSize, bytes: configuration.pushBatchBytes).enumerated() {
                let outcome = try await send(batch, key: "\(clientID):v\(schemaVersion):snapshot:\(entity.name):\(index)", schemaVersion: schemaVersion)
                result.pushed += outcome.pushed
                result.conflicts += outcome.conflicts
                result.quarantined += outcome.quarantined
            }
        }
        try store { db in try SyncStore.set("snapshot", "done", db) }
        return result
    }

    struct Range {
        var from: HistoryToken
        var through: HistoryToken
        /// The first batch not yet answered.
        var chunk: Int
    }

    func acknowledgedToken() throws -> HistoryToken {
        do {
            return try container.historyReaders().first { $0.name == SyncStore.reader }?.acknowledged ?? .start
        } catch {
            throw SyncError(.store, "the store failed: \(error)")
        }
    }

    /// The saved range when it starts at `acknowledged`, else the next one (saved).
    func nextRange(after acknowledged: HistoryToken) throws -> Range? {
        if let text = try read({ db in try SyncStore.value("inflight", db) }) {
            let parts = text.split(separator: "-").compactMap { Int64($0) }
            if parts.count == 3, parts[0] == acknowledged.rawValue {
                return Range(from: HistoryToken(rawValue: parts[0]), through: HistoryToken(rawValue: parts[1]), chunk: Int(parts[2]))
            }
        }
        var through: HistoryToken?
        var changes = 0
        var cursor = acknowledged
        while changes < configuration.pushRangeChanges {
            var descriptor = HistoryDescriptor(after: cursor)
            descriptor.excludedAuthors = [SyncStore.author]
            descriptor.fetchLimit = 100
            let page: [HistoryTransaction]
            do { page = try container.fetchHistory(descriptor) } catch { throw SyncError(.store, "the store failed: \(error)") }
            guard let last = page.last else { break }
            for transaction in page {
                changes += transaction.changes.count
                through = transaction.token
                if changes >= configuration.pushRangeChanges { break }
            }
            cursor = last.token
            if page.count < 100 { break }
        }
        guard let through else { return nil }
        let range = Range(from: acknowledged, through: through, chunk: 0)
        try store { db in try SyncStore.set("inflight", "\(range.from.rawValue)-\(range.through.rawValue)-0", db) }
        return range
    }

    /// The local (non-sync) transactions in `(from, through]`.
    func history(after from: HistoryToken, through: HistoryToken) throws -> [HistoryTransaction] {
        var result: [HistoryTransaction] = []
        var cursor = from
        while true {
            var descriptor = HistoryDescriptor(after: cursor)
            descriptor.excludedAuthors = [SyncStore.author]
            descriptor.fetchLimit = 200
            let page: [HistoryTransaction]
            do { page = try container.fetchHistory(descriptor) } catch { throw SyncError(.store, "the store failed: \(error)") }
            for transaction in page where transaction.token <= through { result.append(transaction) }
            guard let last = page.last, last.token < through, page.count == 200 else { return result }
            cursor = last.token
        }
    }
}

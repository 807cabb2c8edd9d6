import Foundation
import Hummingbird
import NIOCore
import TandemConflicts
import TandemSchema
import TandemWire

extension Routes {
    /// `GET /v1/datasets/{dataset}/snapshot?after=TOKEN&limit=N` (feature `snapshot`): the
    /// dataset's records as of one log position P, in pages, for a replica that starts from
    /// nothing or whose cursor expired (`cursor_expired`). Each record comes as the changes
    /// that make it: an insert with every value and its stamp (and a link or unlink per
    /// many-to-many link), or a delete for a tombstone still kept. Pages are read one after
    /// the other while pushes go on: a record may be newer than P, never older, and the
    /// client pulls from P afterwards, which per-value merging makes idempotent.
    ///
    /// The answer is a pull answer: `nextCursor` is the next page's token (`s1.…`) while
    /// `hasMore`, then the pull cursor at P.
    ///
    /// - Throws: 400 `invalid_cursor` for text that is no token, 409 as for a pull's cursor
    ///   (another dataset or epoch), 410 `cursor_expired` when compaction passed P since the
    ///   first page (start again without `after`).
    func snapshot(_ request: Request, _ context: TandemRequestContext) async throws -> Response {
        let dataset = try await dataset(context)
        let query = request.uri.queryParameters
        let scope = storage.cursorScope(of: dataset.id)
        var position: Int64
        var after = ""
        if let text = query["after"], !text.isEmpty {
            guard let token = SnapshotToken(String(text)) else {
                throw APIError.badRequest("invalid_cursor", "'\(text)' is not a snapshot token; pass the nextCursor of the page before, or nothing to start")
            }
            try await check(token.cursor, of: dataset)
            position = token.cursor.position
            after = token.after
            let state = try await storage.compaction(dataset: dataset.id)
            if position < state.compactedThrough { throw Self.cursorExpired(after: position) }
            if position > state.head {
                throw APIError(
                    .conflict, "cursor_ahead",
                    "the snapshot token is at position \(position), past the end of this dataset's log (\(state.head)): start the snapshot again without after")
            }
        } else {
            position = try await storage.logHead(dataset: dataset.id)
        }
        var limit = min(configuration.defaultSnapshotPageSize, configuration.maxPageSize)
        if let text = query["limit"] {
            guard let value = Int(String(text)), value >= 1 else {
                throw APIError.badRequest("invalid_limit", "limit must be a whole number from 1 to \(configuration.maxPageSize)")
            }
            limit = min(value, configuration.maxPageSize)
        }
        let version = try await storage.schemaHistory(dataset: dataset.id).last?.version ?? 0
        let (records, hasMore) = try await storage.records(dataset: dataset.id, after: after, limit: limit, maxBytes: configuration.maxPageBytes)
        var json = WireJSON()
        json.reserveCapacity(records.count * 256 + 256)  // a record of a few values takes about 250 bytes
        json.raw(WireJSON.pullResponseHead)
        json.raw("[")
        // A record merged into another after P (read here after its merge) is left out: its
        // insert and the merge both come after P in the log, which the replica pulls next, in
        // that order, as every other replica had them. Sent as merged, it made the replica take
        // the insert, pulled after, for a change of the survivor, with all its stamps.
        let mergedAfter = try await mergesLogged(dataset.id, after: position, among: records)
        var count = 0
        for record in records where !mergedAfter.contains(record.uri) {
            count += json.appendSnapshot(of: record, position: position, schemaVersion: version, separated: count > 0)
        }
        json.raw("]")
        let next: String
        if hasMore, let last = records.last {
            next = SnapshotToken(cursor: Cursor(scope, position: position), after: last.uri).text
        } else {
            // A cursor even at 0: the client then knows it bootstrapped.
            next = Cursor(scope, position: position).text
        }
        json.pullResponseTail(hasMore: hasMore, nextCursor: next, serverTime: dependencies.now())
        dependencies.metrics.changesPulled.increment(by: count)
        // The client's cursor is P once it has the last page.
        dependencies.activity.pulled(
            dataset: dataset.id, owner: dataset.owner.id, client: context.client, user: try context.requireUser().name, position: hasMore ? nil : position, changes: count)
        return Self.json(ByteBuffer(bytes: json.bytes))
    }

    /// The records of `records` merged into another (deleted, with a survivor) whose merge
    /// (`delete` with `mergedInto`) is in the log after `position`. Reads the log after P only
    /// when the page holds such a record (rare: merges are).
    func mergesLogged(_ dataset: Int64, after position: Int64, among records: [StoredRecord]) async throws -> Set<String> {
        let losers = Set(records.filter { $0.merged != nil && $0.state.isDeleted }.map(\.uri))
        guard !losers.isEmpty else { return [] }
        var found: Set<String> = []
        var after = position
        while true {
            let (entries, hasMore) = try await storage.pull(dataset: dataset, after: after, limit: configuration.maxPageSize)
            for entry in entries where entry.change.kind == .delete && entry.change.mergedInto != nil && losers.contains(entry.change.record) {
                found.insert(entry.change.record)
            }
            guard hasMore, let last = entries.last?.position else { return found }
            after = last
        }
    }

    /// The changes that make `record` on a replica that lacks it: a delete for a tombstone;
    /// else an insert of its values (compact stamps: `"*"` its creation, others named),
    /// then one link or unlink per many-to-many link field, with its stamp. The route writes
    /// their text straight from the state (``WireJSON/appendSnapshot(of:position:schemaVersion:separated:)``);
    /// this is its reference, which tests hold it to.
    ///
    /// ```swift
    /// Routes.changes(making: StoredRecord(uri: uri, state: state))   // [insert, link, …]
    /// ```
    static func changes(making record: StoredRecord) -> [WireChange] {
        let state = record.state
        if state.isDeleted {
            // A record merged into another: its delete names the survivor, as the log's did.
            let survivor = record.merged.flatMap { $0.stamp == state.deleted ? $0.survivor : nil }
            return [
                WireChange(record: record.uri, entity: state.entity, kind: .delete, stamps: ["*": (state.deleted ?? .zero).description], mergedInto: survivor)
            ]
        }
        var values: [String: WireValue] = [:]
        var links: [WireChange] = []
        for (field, value) in state.fields {
            if let hash = field.firstIndex(of: "#") {
                let linked = value.value == .bool(true)
                links.append(
                    WireChange(
                        record: record.uri, entity: state.entity, kind: linked ? .link : .unlink,
                        values: [String(field[..<hash]): .text(String(field[field.index(after: hash)...]))], stamps: ["*": value.stamp.description]))
            } else {
                values[field] = value.value
            }
        }
        let created = state.created ?? state.fields.values.map(\.stamp).max() ?? .zero
        var stamps = ["*": created.description]
        for (field, value) in state.fields where !field.contains("#") && value.stamp != created { stamps[field] = value.stamp.description }
        let insert = WireChange(record: record.uri, entity: state.entity, kind: .insert, values: values, stamps: stamps)
        return [insert] + links.sorted { $0.linkField ?? "" < $1.linkField ?? "" }
    }
}

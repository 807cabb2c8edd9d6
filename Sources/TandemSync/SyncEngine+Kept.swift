import Foundation
import GRDB
import Tandem
import TandemSchema
import TandemWire

/// Values kept for a schema that can show them (``SyncStore``'s `tandem_sync_kept`): applied
/// by the first sync whose store can, without pulling them again.
extension SyncEngine {
    /// Applies the kept values this store's schema can show now (its app was updated, and
    /// the store migrated to a schema with the attribute, entity, relationship or enum case),
    /// record by record as pulled changes with their stamps: an edit made here since wins
    /// where it is newer. Those the schema still cannot show stay kept. Returns how many
    /// changes were applied.
    ///
    /// ```swift
    /// let shown = try engine.applyKept()   // every sync does it after its handshake
    /// ```
    ///
    /// - Throws: ``SyncError`` with code `store`.
    func applyKept() throws -> Int {
        // The store's schema (and the version it syncs as) is the engine's for its lifetime:
        // once per engine is enough.
        guard !keptTried else { return 0 }
        let kept = try read { db in try SyncStore.kept(db) }
        guard !kept.isEmpty else {
            keptTried = true
            return 0
        }
        var applier = try makeApplier()
        applier.replayingKept = true
        var shown: [Replay] = []
        for record in Dictionary(grouping: kept, by: \.record).values {
            shown += Self.replay(record, applier: applier)
        }
        guard !shown.isEmpty else {
            keptTried = true
            return 0
        }
        // In log order, links after every record (a record's insert is replayed at its
        // newest field's position, which may follow a link's).
        shown.sort { ($0.change.kind.isLink ? 1 : 0, $0.position) < ($1.change.kind.isLink ? 1 : 0, $1.position) }
        let outcome: ChangeApplier.Outcome
        do {
            outcome = try container.write(author: SyncStore.author) { db in
                var outcome = ChangeApplier.Outcome()
                for item in shown {
                    for field in item.fields { try SyncStore.removeKept(record: item.change.record, field: field, db) }
                    try applier.apply(LogEntry(position: item.position, change: item.change, schemaVersion: item.schemaVersion), db, into: &outcome)
                }
                if let newest = outcome.newestStamp { try ModelContainer.advanceClock(past: newest, in: db) }
                return outcome
            }
        } catch let error as SyncError {
            throw error
        } catch {
            throw SyncError(.store, "the store failed: \(error)")
        }
        keptTried = true
        // What the replay decided, as a pull's retry does: policy decisions and delete rules
        // become local edits, pushed by this sync.
        try resolve(outcome.resolutions)
        if !outcome.dangling.isEmpty {
            do { _ = try container.write(author: "sync.resolve") { db in try applier.resolveDangling(outcome.dangling, db) } } catch {
                throw SyncError(.store, "the store failed: \(error)")
            }
        }
        logger.info("applied values kept for this store's schema", metadata: ["changes": "\(shown.count)", "still kept": "\(outcome.kept)"])
        return outcome.applied
    }

    /// One change made of kept fields, to apply as the log entry at `position` of
    /// `schemaVersion`; `fields` are the kept fields it uses up.
    struct Replay {
        var position: Int64
        var schemaVersion: Int
        var change: WireChange
        var fields: [String]
    }

    /// The changes to apply of one record's kept fields that `applier`'s schema shows now:
    /// its existence and values as one insert (or its delete), else its values as one
    /// update; its links one by one.
    static func replay(_ fields: [SyncStore.Kept], applier: ChangeApplier) -> [Replay] {
        let parsed = fields.compactMap { kept in kept.change.map { (kept, $0) } }
        guard let entity = parsed.first?.1.entity, let known = applier.columns[entity] else { return [] }
        var result: [Replay] = []
        var existence = parsed.first { $0.0.field == WireChange.deleteStampKey }
        // A delete: applied first; values kept after it (newer than it) then meet the delete
        // as they would have in log order (logged as lost to it).
        if let deleted = existence, deleted.1.kind == .delete {
            result.append(Replay(position: deleted.0.position, schemaVersion: deleted.0.schemaVersion ?? 0, change: deleted.1, fields: [deleted.0.field]))
            existence = nil
        }
        var values: [String: WireValue] = [:]
        var stamps: [String: String] = [:]
        var used: [String] = []
        var position = existence?.0.position ?? result.first?.position ?? 0
        var version = existence?.0.schemaVersion ?? result.first?.schemaVersion ?? 0
        for (kept, change) in parsed where change.kind == .update {
            // Kept under its wire name: shown when this store has a column by that name.
            guard let (column, value) = change.values.first, applier.isShown(applier.naming.localColumn(column, of: entity), value, of: entity, known: known)
            else { continue }
            values[column] = value
            stamps[column] = change.stamps[column]
            used.append(kept.field)
            position = max(position, kept.position)
            version = max(version, kept.schemaVersion ?? 0)
        }
        let record = parsed[0].1.record
        if let existence, let created = existence.1.stamps[WireChange.deleteStampKey] {
            stamps[WireChange.deleteStampKey] = created
            result.append(
                Replay(
                    position: position, schemaVersion: version, change: WireChange(record: record, entity: entity, kind: .insert, values: values, stamps: stamps),
                    fields: used + [existence.0.field]))
        } else if !values.isEmpty {
            result.append(
                Replay(position: position, schemaVersion: version, change: WireChange(record: record, entity: entity, kind: .update, values: values, stamps: stamps), fields: used))
        }
        for (kept, change) in parsed where change.kind.isLink {
            guard let name = change.values.keys.first, applier.relationships[entity]?.contains(name) == true else { continue }
            result.append(Replay(position: kept.position, schemaVersion: kept.schemaVersion ?? 0, change: change, fields: [kept.field]))
        }
        return result
    }

    /// During a resync, pushes the values kept for a newer schema again: the server's data
    /// (restored from a backup) may lack them too, and this store may be the only one left
    /// holding them. Each record's kept fields go as one change per schema version they were
    /// written with (its existence and values as an insert, or its values as an update; a
    /// kept delete as itself; links one by one, after the records), under that version.
    /// Fields of a version the server does not have (registered after its backup) stay
    /// kept here, with a warning: the server could not check them.
    func pushKeptAgain(keyPrefix: String) async throws -> PushResult {
        var result = PushResult()
        let kept = try read { db in try SyncStore.kept(db) }
        guard !kept.isEmpty else { return result }
        let history = try Self.decode(SchemaHistory.self, try await call("GET", "/v1/datasets/\(dataset)/schema"))
        let registered = Set(history.versions.map(\.version))
        let shape = batchShape
        for (version, fields) in Dictionary(grouping: kept, by: { $0.schemaVersion ?? 0 }).sorted(by: { $0.key < $1.key }) {
            guard registered.contains(version) else {
                logger.warning(
                    "values kept for a newer schema were written with a schema version the server does not have (registered after its backup); they stay kept here",
                    metadata: ["version": "\(version)", "fields": "\(fields.count)"])
                continue
            }
            let changes = Self.keptChanges(fields)
            logger.info("pushing values kept for a newer schema again (resync)", metadata: ["version": "\(version)", "changes": "\(changes.count)"])
            for (index, batch) in PushPlanner.chunks(changes, count: shape.count, bytes: shape.bytes).enumerated() {
                var outcome = try await send(batch, key: "\(keyPrefix):kept:v\(version):\(index)/\(shape.count)", schemaVersion: version)
                try store { db in try outcome.save(db) }
                result.add(outcome)
            }
        }
        return result
    }

    /// Kept fields (of one schema version) as the changes that wrote them: per record, its
    /// existence and values as one insert, else its values as one update, or its delete;
    /// then every link.
    static func keptChanges(_ fields: [SyncStore.Kept]) -> [WireChange] {
        var records: [WireChange] = []
        var links: [WireChange] = []
        for (_, recordFields) in Dictionary(grouping: fields, by: \.record).sorted(by: { $0.key < $1.key }) {
            let parsed = recordFields.compactMap(\.change)
            guard let first = parsed.first else { continue }
            links += parsed.filter(\.kind.isLink)
            if let deleted = parsed.first(where: { $0.kind == .delete }) {
                records.append(deleted)
                continue
            }
            var values: [String: WireValue] = [:]
            var stamps: [String: String] = [:]
            for change in parsed where change.kind == .update {
                for (column, value) in change.values {
                    values[column] = value
                    stamps[column] = change.stamps[column] ?? change.stamps[WireChange.deleteStampKey]
                }
            }
            if let existence = parsed.first(where: { $0.kind == .insert }) {
                stamps[WireChange.deleteStampKey] = existence.stamps[WireChange.deleteStampKey]
                records.append(WireChange(record: first.record, entity: first.entity, kind: .insert, values: values, stamps: stamps))
            } else if !values.isEmpty {
                records.append(WireChange(record: first.record, entity: first.entity, kind: .update, values: values, stamps: stamps))
            }
        }
        return records + links
    }
}

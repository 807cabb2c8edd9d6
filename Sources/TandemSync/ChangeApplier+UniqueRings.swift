import Foundation
import GRDB
import TandemSchema
import TandemWire

extension ChangeApplier {
    /// Applies pulled changes that wait for one another's unique values: records that swapped
    /// their values elsewhere (A takes B's, B takes A's), or a longer ring, perhaps over several
    /// changes of one record. One at a time, each meets a value another one frees later, so
    /// none could ever go: the server took them together (it settles a push's unique values
    /// when the whole push is applied).
    ///
    /// The records whose waiting changes set values held here by one another are applied as
    /// the server did, one group of them at a time in a savepoint: every waiting change of
    /// the group in log order, and before each one, the group's record holding the value it
    /// sets gives it up for a placeholder (its own id: the journal shows it as an
    /// intermediate value written by `sync`), to take its own value with its own change
    /// later. When a record is left on its placeholder, or a change goes back to the
    /// quarantine, nothing of the group is kept and its changes wait.
    ///
    /// ```swift
    /// try applier.applyUniqueRings(try SyncStore.quarantined(pulled: true, db), db, into: &outcome)
    /// ```
    ///
    /// - Throws: a database error.
    func applyUniqueRings(_ waiting: [SyncStore.Quarantined], _ db: Database, into outcome: inout Outcome) throws {
        struct Waiting {
            var entry: SyncStore.Quarantined
            var change: WireChange
            var key: String
        }
        var changes: [Waiting] = []
        var holders: [String: Set<String>] = [:]  // "entity/id" → the records holding values its changes set
        for entry in waiting {
            guard entry.position != nil, let change = entry.wireChange, change.kind == .insert || change.kind == .update,
                uniqueEntities.contains(change.entity), let uri = RecordURI(change.record)
            else { continue }
            let key = change.entity + "/" + uri.id
            changes.append(Waiting(entry: entry, change: change, key: key))
            if let holder = try Self.uniqueHolder(of: change.entity, values: change.values, except: uri.id, schema: schema, db) {
                holders[key, default: []].insert(change.entity + "/" + holder)
            }
        }
        // Members: records waiting for values that members hold. A record waiting for a value
        // that a record not waiting holds cannot go, nor can what waits for it.
        var members = Set(holders.keys)
        var pruned = true
        while pruned {
            pruned = false
            for key in members where !(holders[key] ?? []).isSubset(of: members) {
                members.remove(key)
                pruned = true
            }
        }
        guard !members.isEmpty else { return }
        // Groups: members linked by the values they wait for, each tried on its own.
        var group: [String: String] = [:]
        func root(_ key: String) -> String {
            var key = key
            while let parent = group[key], parent != key { key = parent }
            return key
        }
        for key in members.sorted() {
            if group[key] == nil { group[key] = key }
            for holder in (holders[key] ?? []).sorted() {
                if group[holder] == nil { group[holder] = holder }
                let (a, b) = (root(key), root(holder))
                if a != b { group[max(a, b)] = min(a, b) }
            }
        }
        let groups = Dictionary(grouping: changes.filter { members.contains($0.key) }, by: { root($0.key) })
        for (_, group) in groups.sorted(by: { $0.key < $1.key }) {
            try applyRing(group.map { ($0.entry, $0.change, $0.key) }, db, into: &outcome)
        }
    }

    /// Applies one group's waiting changes (in log order) as ``applyUniqueRings(_:_:into:)``
    /// says, all or nothing.
    private func applyRing(_ changes: [(entry: SyncStore.Quarantined, change: WireChange, key: String)], _ db: Database, into outcome: inout Outcome) throws {
        let keys = Set(changes.map(\.key))
        var result = outcome
        try db.inSavepoint {
            var placeholders: [(table: String, column: String, id: String)] = []
            let before = try SyncStore.quarantineCounts(db).pulled
            for (entry, change, _) in changes.sorted(by: { ($0.entry.position ?? 0, $0.entry.id) < ($1.entry.position ?? 0, $1.entry.id) }) {
                guard let uri = RecordURI(change.record) else { continue }
                // The member holding a value this change sets gives it up first.
                if let holder = try Self.uniqueHolder(of: change.entity, values: change.values, except: uri.id, schema: schema, db),
                    keys.contains(change.entity + "/" + holder)
                {
                    let columns = schema.entity(named: change.entity)?.attributes.filter(\.isUnique).flatMap { $0.columns.map(\.name) } ?? []
                    if let stamps = try String.fetchOne(db, sql: "SELECT \(Self.stampColumn) FROM \(q(change.entity)) WHERE \(Self.idColumn) = ?", arguments: [holder]) {
                        // Its stamps written back as they are (a space added), so the journal's
                        // trigger does not stamp the placeholder as a local edit.
                        try db.execute(
                            sql: "UPDATE \(q(change.entity)) SET \(columns.map { q($0) + " = ?" }.joined(separator: ", ")), \(Self.stampColumn) = ? WHERE \(Self.idColumn) = ?",
                            arguments: StatementArguments(columns.map { _ in Self.placeholder + holder } + [stamps + " ", holder]))
                        placeholders += columns.map { (change.entity, $0, holder) }
                    }
                }
                try SyncStore.unquarantine([entry.id], db)
                try apply(LogEntry(position: entry.position!, change: change, schemaVersion: entry.schemaVersion ?? 0), db, into: &result)
            }
            if try SyncStore.quarantineCounts(db).pulled > before - changes.count { return .rollback }
            for (table, column, id) in placeholders {
                let left =
                    try Bool.fetchOne(
                        db, sql: "SELECT 1 FROM \(q(table)) WHERE \(Self.idColumn) = ? AND \(q(column)) = ?",
                        arguments: [id, Self.placeholder + id]) ?? false
                if left { return .rollback }
            }
            outcome = result
            return .commit
        }
    }

    /// What a ring's records hold in their unique columns while its changes are applied.
    static let placeholder = "\u{1}tandem-ring "
}

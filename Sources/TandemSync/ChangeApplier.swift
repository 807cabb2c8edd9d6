import Foundation
import GRDB
import Tandem
import TandemSchema
import TandemSQLite
import TandemWire
import TandemConflicts

/// Applies pulled log entries to the store's rows, inside the sync's write transaction
/// (author `sync`, so the journal never pushes them back).
///
/// Per column, the newer HLC stamp wins (the server decided the same way, so every replica
/// converges). A pulled delete removes the row unless the row was created after it (a
/// re-insert); a pulled insert of a record this store deleted, unpushed and later, is
/// skipped (delete wins; the delete is pushed next). Values that lose against an unpushed
/// local edit, in either direction, go to the conflict log. An entry that cannot be applied
/// is quarantined with its reason; the others go on.
struct ChangeApplier {
    let schema: Schema
    let dataset: String
    var now: Int64
    /// Unpushed local edits: record URI → column → stamp (`*`: a delete).
    var pending: [String: [String: HLCTimestamp]]
    /// This store's HLC node: a local value stamped by it and newer than a pulled one was
    /// written without having seen the pulled one (pulls come in log order), so the pulled
    /// value lost a real conflict.
    var node: UInt64 = 0
    /// Whether a remote stamp beats a local one (`>`; tests plant a wrong one to show that
    /// the convergence simulation catches it).
    var remoteWins: @Sendable (HLCTimestamp, HLCTimestamp) -> Bool = { ColumnMerge.incomingWins($0, over: $1) }
    /// Whether a pulled delete applies delete rules to local records pointing at it (tests
    /// plant `false` to show that the simulation catches it).
    var appliesDeleteRules = true

    struct Outcome {
        var applied = 0
        var conflicts = 0
        var quarantined = 0
        /// Values kept for a schema that can show them (``SyncStore/keep(record:field:stamp:position:schemaVersion:change:at:_:)``).
        var kept = 0
        var newestStamp: HLCTimestamp?
        /// Values a conflict policy decided, to write as new local edits after the page.
        var resolutions: [Resolution] = []

        /// Forgets an earlier policy decision about `column` of record `uuid` (a newer pulled
        /// value of it came): a decision against a value the server has since replaced would
        /// overwrite the newer one everywhere.
        mutating func supersede(_ entity: String, _ uuid: String, _ column: String) {
            guard !resolutions.isEmpty else { return }
            for index in resolutions.indices.reversed()
            where !resolutions[index].reinsert && resolutions[index].uuid == uuid && resolutions[index].entity == entity {
                resolutions[index].values[column] = nil
                resolutions[index].stamps?[column] = nil
                if resolutions[index].values.isEmpty { resolutions.remove(at: index) }
            }
        }
        /// References to records a pulled delete removed, decided once the pull is caught
        /// up (see ``ChangeApplier/resolveDangling(_:_:)``).
        var dangling: [Dangling] = []

        /// Adds `other`'s counts (what a later step of the same pull did).
        mutating func add(_ other: Outcome) {
            applied += other.applied
            conflicts += other.conflicts
            quarantined += other.quarantined
        }
    }

    /// A local record that pointed at a record a pulled delete removed, when it was seen.
    struct Dangling: Hashable {
        var entity: String
        var id: String
        var column: String
        var target: String
        var targetEntity: String
    }

    /// A new local edit a policy asks for: set `values` on the record (re-inserting it when
    /// `reinsert`).
    struct Resolution {
        var entity: String
        var uuid: String
        var values: [String: WireValue]
        var reinsert = false
        /// The values' own stamps, kept (a merge carrying this store's values over): the edit
        /// is pushed, but a later edit elsewhere still wins. `nil`: fresh stamps (a policy's
        /// decision, which must win everywhere).
        var stamps: [String: HLCTimestamp]? = nil
    }

    /// A to-one relationship pointing at an entity, and what deleting its target does to the
    /// record holding it (the target side's delete rule; `.nullify` without an inverse).
    struct Referrer {
        var entity: String
        var column: String
        var rule: Schema.Relationship.DeleteRule
    }

    var policies: [String: ConflictPolicy] = [:]
    var updateWinsOverDelete: Set<String> = []
    /// Log positions a requested resync pulls again (``SyncState/replayThrough``): an older
    /// value of theirs losing to this store's is not logged as a conflict again.
    var replayThrough: Int64 = 0

    func policy(_ entity: String, _ column: String) -> ConflictPolicy {
        policies[entity + "." + column] ?? policies[entity] ?? .lastWriterWins
    }

    let columns: [String: [String: Schema.Column]]
    /// Entity name → the to-one relationships that point at it.
    let referrers: [String: [Referrer]]
    /// Entity name → its to-one relationships: column → (destination, destination's rule).
    let references: [String: [String: (destination: String, rule: Schema.Relationship.DeleteRule)]]
    /// Every entity and column name, quoted for SQL once (quoting per change showed up in
    /// profiles).
    private let quoted: [String: String]

    /// An entity's statements every pulled change uses, written once.
    struct EntitySQL {
        var selectStamps: String
        var delete: String
        /// Every column but the id, sorted, and the insert of a record that has them all.
        var columns: [String]
        var insertAll: String
        /// `insertAll` that does nothing when the record exists (a pulled insert tries it
        /// before looking the record up: it usually does not exist).
        var insertNew: String
        /// `insertAll` that does nothing when any constraint fails (a bootstrap's row, which
        /// then goes the general way). `OR IGNORE` reaches the journal's triggers too, so
        /// the statement cannot abort half done and SQLite keeps no statement journal for it:
        /// a tenth of a bootstrap's inserting.
        var insertOrIgnore: String
    }
    let sql: [String: EntitySQL]
    /// Entities with a unique attribute: their records can be merged into others.
    let uniqueEntities: Set<String>
    /// Entity → the join tables (and their column) holding its records' ids.
    let joinColumns: [String: [(table: String, column: String)]]
    /// Join table → the entity whose relationship owns its links (a link is a field of the
    /// owner, `<relationship>#<member>`), and its owner and member columns.
    private let linkTables: [String: (owner: String, relationship: String, ownerColumn: String, memberColumn: String)]
    /// Whether the store has merged any record: until then no change is looked up in the
    /// merge map (a query per pulled change of a bulk pull otherwise).
    let merges = MergeFlag()

    /// Whether the store keeps any value for a newer schema: until then a pulled delete
    /// looks up nothing kept of its record.
    let keptAny = KeptFlag()

    /// Set once a value is kept; a class so a page's applier sees what it kept itself.
    final class KeptFlag {
        var value = false
    }

    /// Set once a merge is known; a class so a page's applier sees merges made within it.
    final class MergeFlag {
        var any = false
        /// Whether the store has ever applied a merge (`any` ends when every merged record
        /// was made again): a reference it re-pointed may still meet its maker's value
        /// pulled back under the same stamp.
        var ever = false
    }
    /// Entity → its to-one columns pointing at an entity with a unique attribute, and that entity.
    let mergeableReferences: [String: [(column: String, destination: String)]]
    /// Entity → its enum columns whose cases this store knows (its schema's; the engine adds
    /// those of the published version it syncs as): a pulled raw value that is none of them
    /// is kept aside, as a value of a newer schema is, not shown to an app that cannot
    /// decode it.
    var enumCases: [String: [String: EnumCases]]
    /// Set while kept values are applied (``SyncEngine`` `applyKept`): a column with no stamp
    /// of its own in a row was never written here (the store could not show it), so it does
    /// not carry the row's creation stamp.
    var replayingKept = false
    /// `false` only when a test plants the loss of values a schema cannot show.
    var keepsUnknownValues = true
    /// Entity → the value for each column that cannot be NULL, for a pulled insert without
    /// it (made by an app version without the attribute): the attribute's literal default,
    /// an enum's default case, else the type's zero.
    let insertDefaults: [String: [String: WireValue]]
    /// The store's column names on the wire.
    let naming: WireNaming
    /// Entity → its relationships' names: a pulled link of another is kept for a schema
    /// that has it.
    let relationships: [String: Set<String>]

    func q(_ name: String) -> String { quoted[name] ?? SQLName.quote(name) }

    init(schema: Schema, dataset: String, now: Int64, pending: [String: [String: HLCTimestamp]]) {
        self.schema = schema
        self.dataset = dataset
        self.now = now
        self.pending = pending
        var columns: [String: [String: Schema.Column]] = [:]
        for entity in schema.entities {
            columns[entity.name] = Dictionary(entity.columns.filter { $0.role != .primaryKey }.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        }
        self.columns = columns
        var referrers: [String: [Referrer]] = [:]
        var references: [String: [String: (destination: String, rule: Schema.Relationship.DeleteRule)]] = [:]
        for entity in schema.entities {
            for relationship in entity.relationships where !relationship.isToMany {
                let rule = relationship.inverse.flatMap { schema.entity(named: relationship.destination)?.relationship(named: $0)?.deleteRule } ?? .nullify
                referrers[relationship.destination, default: []].append(Referrer(entity: entity.name, column: relationship.name, rule: rule))
                references[entity.name, default: [:]][relationship.name] = (relationship.destination, rule)
            }
        }
        self.referrers = referrers
        self.references = references
        var quoted: [String: String] = [:]
        for entity in schema.entities {
            quoted[entity.name] = SQLName.quote(entity.name)
            for column in entity.columns { quoted[column.name] = SQLName.quote(column.name) }
        }
        self.quoted = quoted
        var sql: [String: EntitySQL] = [:]
        for entity in schema.entities {
            let table = quoted[entity.name]!
            let names = columns[entity.name, default: [:]].keys.sorted()
            sql[entity.name] = EntitySQL(
                selectStamps: "SELECT \(Self.stampColumn) FROM \(table) WHERE \(Self.idColumn) = ?",
                delete: "DELETE FROM \(table) WHERE \(Self.idColumn) = ?",
                columns: names,
                insertAll: Self.insertSQL(table: table, columns: names.map { quoted[$0]! }),
                insertNew: Self.insertSQL(table: table, columns: names.map { quoted[$0]! }) + " ON CONFLICT(\(Self.idColumn)) DO NOTHING",
                insertOrIgnore: "INSERT OR IGNORE" + Self.insertSQL(table: table, columns: names.map { quoted[$0]! }).dropFirst("INSERT".count))
        }
        self.sql = sql
        var enumCases: [String: [String: EnumCases]] = [:]
        for entity in schema.entities {
            let cases = EnumCases.columns(of: entity)
            if !cases.isEmpty { enumCases[entity.name] = cases }
        }
        self.enumCases = enumCases
        naming = WireNaming(schema: schema)
        var insertDefaults: [String: [String: WireValue]] = [:]
        for entity in schema.entities {
            for attribute in entity.attributes {
                for column in attribute.columns where !column.isNullable && column.role == .value {
                    insertDefaults[entity.name, default: [:]][column.name] = Self.insertDefault(of: attribute, column: column)
                }
            }
        }
        self.insertDefaults = insertDefaults
        relationships = Dictionary(uniqueKeysWithValues: schema.entities.map { ($0.name, Set($0.relationships.map(\.name))) })
        let unique = Set(schema.entities.filter { $0.attributes.contains(where: \.isUnique) }.map(\.name))
        uniqueEntities = unique
        var mergeable: [String: [(column: String, destination: String)]] = [:]
        for (entity, columns) in references {
            let targets = columns.filter { unique.contains($0.value.destination) }.map { (column: $0.key, destination: $0.value.destination) }
            if !targets.isEmpty { mergeable[entity] = targets.sorted { $0.column < $1.column } }
        }
        mergeableReferences = mergeable
        var joins: [String: [(table: String, column: String)]] = [:]
        var linkTables: [String: (owner: String, relationship: String, ownerColumn: String, memberColumn: String)] = [:]
        var seen: Set<String> = []
        for entity in schema.entities {
            for relationship in entity.relationships {
                guard case .joinTable(let table, let owner, let member) = schema.storage(of: relationship, in: entity) else { continue }
                if owner == "source" { linkTables[table] = (entity.name, relationship.name, owner, member) }
                for (name, column) in [(entity.name, owner), (relationship.destination, member)] where seen.insert("\(name) \(table) \(column)").inserted {
                    joins[name, default: []].append((table, column))
                }
            }
        }
        joinColumns = joins
        self.linkTables = linkTables
    }

    static func insertSQL(table: String, columns: [String]) -> String {
        "INSERT INTO \(table) (\(idColumn), \(stampColumn)\(columns.map { ", " + $0 }.joined())) VALUES (?, ?\(String(repeating: ", ?", count: columns.count)))"
    }

    /// The entities some to-one relationship points at (their deletes and inserts keep
    /// tombstones and decide delete rules).
    static func referencedEntities(in schema: Schema) -> Set<String> {
        Set(schema.entities.flatMap { $0.relationships.filter { !$0.isToMany }.map(\.destination) })
    }

    static let stampColumn = SyncJournal.stampColumn
    static let idColumn = SyncJournal.idColumn

    func apply(_ entry: LogEntry, _ db: Database, into outcome: inout Outcome) throws {
        // Renamed attributes arrive under their first name (`WireNaming`); the names of a
        // newer schema stay as they came (kept for it).
        var change = naming.isIdentity ? entry.change : naming.fromWire(entry.change)
        func quarantine(_ reason: String) throws {
            try self.quarantine(entry, change, reason, db, &outcome)
        }
        guard let uri = RecordURI(change.record) else {
            return try quarantine("'\(change.record)' is not a record URI")
        }
        guard uri.dataset == dataset, uri.entity == change.entity else {
            return try quarantine("the record URI names dataset '\(uri.dataset)' and entity '\(uri.entity)'; this store is dataset '\(dataset)' and the change says '\(change.entity)'")
        }
        var uuid = uri.id
        var stamps = [String: HLCTimestamp](minimumCapacity: change.stamps.count)
        for (key, text) in change.stamps {
            guard let stamp = HLCTimestamp(text) else { return try quarantine("the stamp of '\(key)' is not an HLC stamp: '\(text)'") }
            stamps[key] = stamp
        }
        if let newest = stamps.values.max() { outcome.newestStamp = max(outcome.newestStamp ?? newest, newest) }
        // An entity of a newer schema: kept whole for a schema that has it.
        guard let known = columns[change.entity] else {
            return try keep(change, fields: nil, entry, stamps: stamps, db, &outcome)
        }
        if change.kind == .delete, keptAny.value, let star = stamps[WireChange.deleteStampKey] {
            try SyncStore.forgetKept(record: change.record, through: star, db)
        }
        var values = change.values
        if change.kind.isLink, let name = change.values.keys.first, relationships[change.entity]?.contains(name) != true {
            return try keep(change, fields: nil, entry, stamps: stamps, db, &outcome)
        }
        // One lookup per change, not per value: most entities have no enum column.
        let cases = enumCases[change.entity]
        let keptSome = !change.kind.isLink && !values.allSatisfy({ Self.shows($0.key, $0.value, known: known, cases: cases) })
        if keptSome { values = try keepUnknownColumns(of: change, entry, stamps: stamps, known: known, db, &outcome) }
        // An insert without values this store's columns need: made by an app version without
        // the attribute, or with an enum value kept aside above. Each gets its default (an
        // enum column a case this store knows) under the zero stamp, so any value written
        // for it, the kept one included once shown, replaces it.
        if change.kind == .insert, let defaults = insertDefaults[change.entity] {
            for (column, fallback) in defaults where values[column] == nil {
                values[column] = cases?[column].map { $0.contains(fallback) ? fallback : $0.firstCase ?? fallback } ?? fallback
                stamps[column] = .zero
            }
        }
        if keptSome && values.isEmpty { return }
        if change.kind != .delete, merges.any, uniqueEntities.contains(change.entity) {
            try followMerge(&change, uuid: &uuid, stamps: stamps, db)
        }
        if change.kind.isLink {
            if let reason = try applyLink(change, uuid: uuid, stamp: stamps["*"] ?? stamps.values.first, db, &outcome) { try quarantine(reason) }
            return
        }
        if change.kind != .delete, merges.any, let targets = mergeableReferences[change.entity] {
            for (column, destination) in targets {
                guard case .text(let target)? = values[column], let survivor = try SyncStore.survivor(entity: destination, id: target, db) else { continue }
                values[column] = .text(survivor)
            }
        }
        let pulled = PulledChange(
            entry: entry, change: change, uuid: uuid, stamps: stamps, values: values, known: known,
            table: q(change.entity), statements: sql[change.entity]!)
        let (rowStamps, statements) = (pulled.rowStamps, pulled.statements)
        // An insert of every column of a record with no unpushed local edit: inserted
        // without looking first (the usual pulled insert is of a record this store has
        // never had). When the record exists, or a unique value is taken, nothing is
        // written and the insert goes the way below.
        if change.kind == .insert, values.count == statements.columns.count, pending.isEmpty || pending[change.record] == nil,
            try insertUnlooked(pulled, rowStamps: rowStamps, db)
        {
            return try inserted(pulled, db, &outcome)
        }
        let row = try db.cachedStatement(sql: statements.selectStamps).fetchFirstText { $0.text(uuid) }
        let exists = row != nil
        let local = (row ?? nil).flatMap(Self.stamps) ?? [:]
        let mine = pending.isEmpty ? [:] : pending[change.record] ?? [:]

        let stored = StoredRow(row: row, exists: exists, local: local, mine: mine)
        switch change.kind {
        case .delete: try applyDelete(pulled, stored, db, &outcome)
        case .insert, .update:
            if exists {
                try applyToStoredRecord(pulled, stored, db, &outcome)
            } else {
                try applyToMissingRecord(pulled, stored, db, &outcome)
            }
        case .link, .unlink: return  // applied above (applyLink)
        }
    }

    /// A change of a record merged into another (both held a unique value): its later inserts
    /// and updates go to the survivor (`change` and `uuid` are pointed there), and references
    /// to it point at the survivor. An insert newer than the merge (an undone delete) makes it
    /// a record of its own again, merged anew if its value still collides.
    func followMerge(_ change: inout WireChange, uuid: inout String, stamps: [String: HLCTimestamp], _ db: Database) throws {
        guard let survivor = try SyncStore.survivor(entity: change.entity, id: uuid, db) else { return }
        let reinserted =
            try change.kind == .insert
            && (stamps["*"] ?? stamps.values.max() ?? .zero) > (SyncStore.mergeStamp(entity: change.entity, loser: uuid, db) ?? .zero)
        if reinserted {
            try SyncStore.unmerge(entity: change.entity, loser: uuid, db)
        } else {
            uuid = survivor
            change.record = "tandem://\(dataset)/\(change.entity)/\(survivor)"
            if !change.kind.isLink { change.kind = .update }
        }
    }

    /// Inserts `pulled` (every column) without looking first; `false`, having written
    /// nothing, when the record exists or a unique value is taken.
    func insertUnlooked(_ pulled: PulledChange, rowStamps: String, _ db: Database) throws -> Bool {
        let statements = pulled.statements
        do {
            try db.cachedStatement(sql: statements.insertNew).executeBound { bind in
                bind.text(pulled.uuid)
                bind.text(rowStamps)
                for name in statements.columns { bind.value(pulled.values[name]!) }
            }
            return db.changesCount == 1
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            return false
        }
    }

    /// Sets `change` (of `entry`, as it stands: pointed at a survivor, say) aside in the
    /// quarantine with `reason`.
    func quarantine(
        _ entry: LogEntry, _ change: WireChange, _ reason: String, _ db: Database,
        _ outcome: inout Outcome
    ) throws {
        try SyncStore.quarantine(
            WireJSON.data { $0.append(change) }.utf8Text, position: entry.position, reason: reason, at: now,
            record: change.record, schemaVersion: entry.schemaVersion, db)
        outcome.quarantined += 1
    }

    func quarantine(_ pulled: PulledChange, _ reason: String, _ db: Database, _ outcome: inout Outcome) throws {
        try quarantine(pulled.entry, pulled.change, reason, db, &outcome)
    }

    /// A pulled record written: counted, its tombstone cleared, its references checked.
    func inserted(_ pulled: PulledChange, _ db: Database, _ outcome: inout Outcome) throws {
        outcome.applied += 1
        try recordInsert(of: pulled.uuid, pulled.change.entity, db)
        try checkReferences(pulled.values, of: pulled.change.entity, pulled.uuid, db, &outcome)
    }

    /// A pulled reference to a record a pulled delete removed (the reference was made before
    /// its maker saw the delete, and reached this store after it): a candidate for the
    /// delete rule, as for a reference that was here first.
    func checkReferences(_ values: [String: WireValue], of entity: String, _ uuid: String, _ db: Database, _ outcome: inout Outcome) throws {
        guard appliesDeleteRules, let references = references[entity] else { return }
        for (column, reference) in references.sorted(by: { $0.key < $1.key }) {
            guard case .text(let target)? = values[column] else { continue }
            let present = try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM \(q(reference.destination)) WHERE \(Self.idColumn) = ?"), arguments: [target]) ?? false
            guard !present, try SyncStore.hasTombstone(entity: reference.destination, id: target, db) else { continue }
            outcome.dangling.append(Dangling(entity: entity, id: uuid, column: column, target: target, targetEntity: reference.destination))
        }
    }

    /// A pulled delete of a record of a referenced entity: a tombstone for references that
    /// arrive later, and the local records still pointing at it as candidates for its delete
    /// rule. Nothing is decided yet: a model save deletes a record before it clears the
    /// references to it, and later log entries may point the records elsewhere.
    func recordDelete(of uuid: String, _ entity: String, _ db: Database, _ outcome: inout Outcome) throws {
        guard referrers[entity] != nil else { return }
        try SyncStore.setTombstone(true, entity: entity, id: uuid, db)
        if appliesDeleteRules { outcome.dangling += try holders(of: uuid, entity, db) }
    }

    /// A pulled insert of a record of a referenced entity: it lives (again), so references
    /// to it are no longer dangling.
    func recordInsert(of uuid: String, _ entity: String, _ db: Database) throws {
        guard referrers[entity] != nil else { return }
        try SyncStore.setTombstone(false, entity: entity, id: uuid, db)
    }

    /// The local records pointing at record `uuid` of `entity`, through any to-one.
    private func holders(of uuid: String, _ entity: String, _ db: Database) throws -> [Dangling] {
        var result: [Dangling] = []
        for referrer in referrers[entity] ?? [] {
            let ids = try String.fetchAll(
                db.cachedStatement(sql: "SELECT \(Self.idColumn) FROM \(q(referrer.entity)) WHERE \(q(referrer.column)) = ? ORDER BY \(Self.idColumn)"),
                arguments: [uuid])
            result += ids.map { Dangling(entity: referrer.entity, id: $0, column: referrer.column, target: uuid, targetEntity: entity) }
        }
        return result
    }

    /// Applies delete rules to the candidates that still point at a deleted record once the
    /// pull is caught up: the replica that deleted it did not know them (they were added or
    /// moved there elsewhere meanwhile). `.cascade` deletes them, and what their own rules
    /// reach; the other rules clear the reference (a `.deny` cannot stop a delete another
    /// replica already made). Runs in a write by author `sync.resolve`, so the edits are
    /// pushed. Each is logged as `parentDeleted`. Returns how many were logged.
    func resolveDangling(_ candidates: [Dangling], _ db: Database) throws -> Int {
        var outcome = Outcome()
        var seen: Set<Dangling> = []
        var queue = candidates.reversed().filter { seen.insert($0).inserted }
        var deleted: Set<String> = []
        /// Deletes record `id` as a save's cascade does: its links go with it, and so do the
        /// members of its many-to-many relationships that cascade (their own rules followed
        /// in turn, each logged); records pointing at a deleted one are looked at next.
        func cascade(_ entity: String, _ id: String) throws {
            var members: [(entity: String, id: String, relationship: String)] = []
            for relationship in schema.entity(named: entity)?.relationships ?? [] where relationship.isToMany && relationship.deleteRule == .cascade {
                guard let definition = schema.entity(named: entity),
                    case .joinTable(let join, let own, let other) = schema.storage(of: relationship, in: definition)
                else { continue }
                for member in try String.fetchAll(db, sql: "SELECT \(q(other)) FROM \(q(join)) WHERE \(q(own)) = ? ORDER BY 1", arguments: [id]) {
                    members.append((relationship.destination, member, relationship.inverse ?? relationship.name))
                }
            }
            try db.execute(sql: "DELETE FROM \(q(entity)) WHERE \(Self.idColumn) = ?", arguments: [id])
            for join in joinColumns[entity] ?? [] {  // its links go with it, as in a save
                try db.execute(sql: "DELETE FROM \(q(join.table)) WHERE \(join.column) = ?", arguments: [id])
            }
            deleted.insert(id)
            queue += try holders(of: id, entity, db).reversed()
            for member in members where !deleted.contains(member.id) {
                guard try Bool.fetchOne(db, sql: "SELECT 1 FROM \(q(member.entity)) WHERE \(Self.idColumn) = ?", arguments: [member.id]) == true else { continue }
                try cascade(member.entity, member.id)
                try conflict(
                    "tandem://\(dataset)/\(member.entity)/\(member.id)", member.relationship, local: .text(id), localStamp: nil,
                    remote: .null, remoteStamp: nil, winner: .remote, rule: ConflictRule.parentDeleted.rawValue, db, &outcome)
            }
        }
        while let candidate = queue.popLast() {
            guard !deleted.contains(candidate.id),
                let reference = references[candidate.entity]?[candidate.column], reference.destination == candidate.targetEntity
            else { continue }
            // Still pointing at it, and it is still gone.
            let pointing = try String.fetchOne(db, sql: "SELECT \(q(candidate.column)) FROM \(q(candidate.entity)) WHERE \(Self.idColumn) = ?", arguments: [candidate.id])
            guard pointing == candidate.target else { continue }
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM \(q(candidate.targetEntity)) WHERE \(Self.idColumn) = ?", arguments: [candidate.target]) == nil else { continue }
            let table = q(candidate.entity)
            if reference.rule == .cascade {
                try cascade(candidate.entity, candidate.id)
            } else {
                try db.execute(sql: "UPDATE \(table) SET \(q(candidate.column)) = NULL WHERE \(Self.idColumn) = ?", arguments: [candidate.id])
            }
            // The reference lost to the delete: the record went with it (cascade) or now
            // points nowhere (the other rules).
            try conflict(
                "tandem://\(dataset)/\(candidate.entity)/\(candidate.id)", candidate.column, local: .text(candidate.target), localStamp: nil,
                remote: .null, remoteStamp: nil, winner: .remote, rule: ConflictRule.parentDeleted.rawValue, db, &outcome)
        }
        return outcome.conflicts
    }

    /// A pulled link or unlink: the join row added or removed, unless an unpushed local link
    /// or unlink of the same member is newer (it is pushed next, and wins there too). A local
    /// one that loses, or a pulled one that does, is logged against the field
    /// `<relationship>#<member>`. Returns why it cannot be applied (to quarantine), if so.
    private func applyLink(_ change: WireChange, uuid: String, stamp: HLCTimestamp?, _ db: Database, _ outcome: inout Outcome) throws -> String? {
        guard change.values.count == 1, let (name, member) = change.values.first, case .text(var target) = member,
            let entity = schema.entity(named: change.entity), let relationship = entity.relationship(named: name),
            case .joinTable(let table, "source", _) = schema.storage(of: relationship, in: entity)
        else {
            return "a \(change.kind.rawValue) names no many-to-many relationship of '\(change.entity)' this store keeps: \(change.values.keys.sorted())"
        }
        guard let stamp else { return "a \(change.kind.rawValue) without its '*' stamp" }
        if merges.any, uniqueEntities.contains(relationship.destination), let survivor = try SyncStore.survivor(entity: relationship.destination, id: target, db) {
            target = survivor
        }
        let field = name + "#" + target
        let linked = change.kind == .link
        // An endpoint whose insert waits in the quarantine (a unique value taken here): the
        // link waits too, and is applied after it.
        for waiting in [change.record, "tandem://\(dataset)/\(relationship.destination)/\(target)"] where try SyncStore.hasQuarantinedInsert(record: waiting, db) {
            return "\(waiting) waits in the quarantine; this \(change.kind.rawValue) is applied after it"
        }
        // A link to a record this store does not have: links are pushed after the inserts of
        // their records, so it was deleted here, and the delete wins.
        if linked {
            let source = try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM \(q(entity.name)) WHERE \(Self.idColumn) = ?"), arguments: [uuid]) ?? false
            let member = try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM \(q(relationship.destination)) WHERE \(Self.idColumn) = ?"), arguments: [target]) ?? false
            guard source, member else {
                try conflict(
                    change.record, field, local: nil, localStamp: nil, remote: .bool(true), remoteStamp: stamp, winner: .local,
                    rule: ConflictRule.deleteWins.rawValue, db, &outcome)
                return nil
            }
        }
        let present = try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM \(q(table)) WHERE source = ? AND target = ?"), arguments: [uuid, target]) ?? false
        if let local = pending.isEmpty ? nil : pending[change.record]?[field] {
            if local > stamp {
                if present != linked, !isOwn(stamp) {
                    try conflict(
                        change.record, field, local: .bool(present), localStamp: local, remote: .bool(linked), remoteStamp: stamp, winner: .local, rule: ConflictRule.lastWriterWins.rawValue, db,
                        &outcome)
                }
                return nil
            }
            if present != linked {
                try conflict(
                    change.record, field, local: .bool(present), localStamp: local, remote: .bool(linked), remoteStamp: stamp, winner: .remote, rule: ConflictRule.lastWriterWins.rawValue, db, &outcome
                )
            }
        }
        // This store's own link pulled back to a record it had moved the link away from when
        // it applied a merge (before pushing it): the server gave it to that record, made
        // again, so the moved copy goes.
        if merges.ever, isOwn(stamp),
            let moved = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT to_source, to_target FROM tandem_sync_moved_link WHERE link_table = ? AND source = ? AND target = ? AND stamp = ?"),
                arguments: [table, uuid, target, stamp.description])
        {
            try db.execute(sql: "DELETE FROM \(q(table)) WHERE source = ? AND target = ?", arguments: [moved[0] as String, moved[1] as String])
            try db.execute(sql: "DELETE FROM tandem_sync_moved_link WHERE link_table = ? AND source = ? AND target = ?", arguments: [table, uuid, target])
        }
        // Any pulled link or unlink of a row a merge moved here settles that row: the moved
        // copy is no longer this store's guess to take back.
        if merges.ever {
            try db.cachedStatement(sql: "DELETE FROM tandem_sync_moved_link WHERE link_table = ? AND to_source = ? AND to_target = ?")
                .execute(arguments: [table, uuid, target])
        }
        guard present != linked else { return nil }
        let sql = linked ? "INSERT OR IGNORE INTO \(q(table)) (source, target) VALUES (?, ?)" : "DELETE FROM \(q(table)) WHERE source = ? AND target = ?"
        try db.cachedStatement(sql: sql).execute(arguments: [uuid, target])
        outcome.applied += 1
        return nil
    }

    /// A record's values and their stamps, as stored.
    struct RowState {
        var values: [String: WireValue]
        var stamps: [String: HLCTimestamp]

        func stamp(_ column: String) -> HLCTimestamp { stamps[column] ?? stamps["*"] ?? .zero }
    }

    /// Record `id` of `entity` as stored here; `nil` when this store does not have it.
    func rowState(_ entity: String, _ id: String, _ db: Database) throws -> RowState? {
        let names = sql[entity]?.columns ?? []
        guard
            let row = try Row.fetchWireValues(
                db.makeStatement(sql: "SELECT \(Self.stampColumn)\(names.map { ", " + q($0) }.joined()) FROM \(q(entity)) WHERE \(Self.idColumn) = ?"),
                arguments: [id])
        else { return nil }
        var values: [String: WireValue] = [:]
        for (index, name) in names.enumerated() { values[name] = row[index + 1] }
        guard case .text(let stamps) = row[0] else { return RowState(values: values, stamps: [:]) }
        return RowState(values: values, stamps: Self.stamps(stamps) ?? [:])
    }

    /// Follows the server's merge of record `loser` into `survivor` (both held a unique
    /// value): remembers it (pulled changes of the loser still waiting go to the survivor),
    /// points the references to the loser at the survivor keeping their stamps, drops its
    /// many-to-many links (the server logged those the survivor takes), and logs the loser's `values` (`nil` when this store did not have
    /// it) with the survivor named. The caller deletes the loser's row.
    func merge(
        _ entity: String, loser: String, values: [String: WireValue]?, into survivor: String,
        at stamp: HLCTimestamp, _ db: Database, _ outcome: inout Outcome
    ) throws {
        try SyncStore.setMerged(entity: entity, loser: loser, survivor: survivor, stamp: stamp, db)
        merges.any = true
        if !merges.ever {
            merges.ever = true
            try SyncState.update(db) { $0.everMerged = true }
        }
        for referrer in referrers[entity] ?? [] {
            let rows = try Row.fetchAll(
                db, sql: "SELECT \(Self.idColumn), \(Self.stampColumn) FROM \(q(referrer.entity)) WHERE \(q(referrer.column)) = ?",
                arguments: [loser])
            for row in rows {
                // The reference keeps its stamp (it means the same record): written explicitly,
                // so the journal's trigger does not stamp it anew.
                let old: String? = row[1]
                var stamps = old.flatMap(Self.stamps) ?? [:]
                stamps[referrer.column] = stamps[referrer.column] ?? stamps["*"] ?? .zero
                let text = Self.stampText(stamps, replacing: old)
                try db.execute(
                    sql: "UPDATE \(q(referrer.entity)) SET \(q(referrer.column)) = ?, \(Self.stampColumn) = ? WHERE \(Self.idColumn) = ?",
                    arguments: [survivor, text, row[0] as String])
            }
        }
        // Its many-to-many links: the server logged, right before this delete, each link that
        // goes over to the survivor (the loser's own and those naming it), so its rows go. A
        // link of this store's not pushed yet moves to the survivor, where the server takes
        // it; one pushed since the merge was decided by the server, and is pulled after this.
        for join in joinColumns[entity] ?? [] {
            if !pending.isEmpty, let link = linkTables[join.table] {
                let (owner, member) = (q(link.ownerColumn), q(link.memberColumn))
                for row in try Row.fetchAll(db, sql: "SELECT \(owner), \(member) FROM \(q(join.table)) WHERE \(join.column) = ?", arguments: [loser]) {
                    let (source, target): (String, String) = (row[0], row[1])
                    guard let stamp = pending["tandem://\(dataset)/\(link.owner)/\(source)"]?["\(link.relationship)#\(target)"] else { continue }
                    let moved = join.column == link.ownerColumn ? [survivor, target] : [source, survivor]
                    try db.execute(sql: "INSERT OR IGNORE INTO \(q(join.table)) (\(owner), \(member)) VALUES (?, ?)", arguments: StatementArguments(moved))
                    // Remembered: the server may give the link to the loser's id made again.
                    if db.changesCount == 1 {
                        try db.execute(
                            sql: "INSERT OR REPLACE INTO tandem_sync_moved_link (link_table, source, target, to_source, to_target, stamp) VALUES (?, ?, ?, ?, ?, ?)",
                            arguments: [join.table, source, target, moved[0], moved[1], stamp.description])
                    }
                }
            }
            try db.execute(sql: "DELETE FROM \(q(join.table)) WHERE \(join.column) = ?", arguments: [loser])
        }
        guard let values else { return }
        var writer = WireJSON()
        writer.object(values) { $0.append($1) }
        try SyncStore.recordConflict(
            SyncConflict(
                at: now, record: "tandem://\(dataset)/\(entity)/\(loser)", attribute: "*",
                localValue: writer.text, localStamp: nil, remoteValue: nil, remoteStamp: stamp.description,
                winner: .remote, rule: ConflictRule.uniqueMerge.rawValue,
                survivor: "tandem://\(dataset)/\(entity)/\(survivor)"), db)
        outcome.conflicts += 1
    }

    /// Folds a pulled update of `record` into its insert waiting in the quarantine, value by
    /// value (the newer stamp wins); `false` when none waits. The insert may wait
    /// for a unique value that this very update changes: applied apart, neither could go.
    ///
    /// With `updates`, into a waiting update as well (the newest): an update that waits for a
    /// unique value like an earlier one of the same record joins it, so the record waits for
    /// its newest values only (a swap done over several saves elsewhere is then one ring).
    func foldIntoQuarantined(
        _ record: String, values: [String: WireValue], stamps: [String: HLCTimestamp], updates: Bool = false,
        _ db: Database
    ) throws -> Bool {
        let rows = try Row.fetchAll(
            db.cachedStatement(sql: "SELECT id, change FROM tandem_sync_quarantine WHERE record = ? AND position IS NOT NULL ORDER BY id DESC"),
            arguments: [record])
        for row in rows {
            guard var insert = try? WireJSONReader.change(Data((row[1] as String).utf8)),
                insert.kind == .insert || (updates && insert.kind == .update)
            else { continue }
            for (column, value) in values {
                guard let stamp = stamps[column] ?? stamps["*"] else { continue }
                let current = insert.stamps[column].flatMap { HLCTimestamp($0) } ?? insert.stamps["*"].flatMap { HLCTimestamp($0) } ?? .zero
                // Two values under one stamp (a swap in one save, one record merged away
                // meanwhile): the tie is decided as everywhere (``ColumnMerge/winsTie(_:over:)``).
                guard stamp > current || (stamp == current && insert.values[column].map { ColumnMerge.winsTie(value, over: $0) } ?? true) else { continue }
                insert.values[column] = value
                insert.stamps[column] = stamp.description
            }
            try db.cachedStatement(sql: "UPDATE tandem_sync_quarantine SET change = ? WHERE id = ?")
                .execute(arguments: [WireJSON.data { $0.append(insert) }.utf8Text, row[0] as Int64])
            return true
        }
        return false
    }

    /// Drops the pulled changes of `record` waiting in the quarantine: a later delete of the
    /// record won over them, or the server merged it into `survivor` (their values went over
    /// with the merge). Each is logged (`deleteWins`, `uniqueMerge`), so none leaves without a trace.
    func dropQuarantined(of record: String, deletedAt delete: HLCTimestamp, survivor: String? = nil, _ db: Database, _ outcome: inout Outcome) throws {
        let rows = try Row.fetchAll(
            db.cachedStatement(sql: "SELECT id, change FROM tandem_sync_quarantine WHERE record = ? AND position IS NOT NULL ORDER BY id"),
            arguments: [record])
        for row in rows {
            try SyncStore.unquarantine([row[0] as Int64], db)
            try SyncStore.recordConflict(
                SyncConflict(
                    at: now, record: record, attribute: "*", localValue: nil, localStamp: delete.description,
                    remoteValue: row[1], remoteStamp: nil, winner: .local,
                    rule: (survivor == nil ? ConflictRule.deleteWins : .uniqueMerge).rawValue, survivor: survivor), db)
            outcome.conflicts += 1
        }
    }

    /// Whether this store stamped `stamp` (its own change, pulled back).
    func isOwn(_ stamp: HLCTimestamp) -> Bool { node != 0 && stamp.node == node }

    func conflict(
        _ record: String, _ attribute: String, local: WireValue?, localStamp: HLCTimestamp?, remote: WireValue?,
        remoteStamp: HLCTimestamp?, winner: SyncConflict.Winner, rule: String, _ db: Database, _ outcome: inout Outcome
    ) throws {
        let logged = try SyncStore.recordConflict(
            SyncConflict(
                at: now, record: record, attribute: attribute, localValue: local?.jsonText, localStamp: localStamp?.description,
                remoteValue: remote?.jsonText, remoteStamp: remoteStamp?.description, winner: winner, rule: rule), db)
        if logged { outcome.conflicts += 1 }
    }

    /// The id of another row holding one of `values`' unique attribute values, if any.
    static func uniqueHolder(of entityName: String, values: [String: WireValue], except uuid: String, schema: Schema, _ db: Database) throws -> String? {
        guard let entity = schema.entity(named: entityName) else { return nil }
        for attribute in entity.attributes where attribute.isUnique {
            let columns = attribute.columns.map(\.name)
            guard columns.allSatisfy({ values[$0] != nil }) else { continue }
            let condition = columns.map { SQLName.quote($0) + " IS ?" }.joined(separator: " AND ")
            // Bound straight to SQLite: a text value with a NUL inside is compared whole.
            let holder = try db.makeStatement(sql: "SELECT \(idColumn) FROM \(SQLName.quote(entityName)) WHERE \(condition) AND \(idColumn) != ? LIMIT 1")
                .fetchFirstText { bind in
                    for column in columns { bind.value(values[column]!) }
                    bind.text(uuid)
                }
            if let holder = holder ?? nil { return holder }
        }
        return nil
    }

    /// A row's `"#hlc"` JSON for `columns` with their `stamps` (a column without one takes
    /// `stamps["*"]`, the default of compact stamps), created at `created`: `"*"` stamps
    /// every column not named, so only the columns stamped otherwise are named, and
    /// `{"*": created}` alone is what a pulled insert usually gets.
    static func rowStamps(created: HLCTimestamp, columns: Dictionary<String, WireValue>.Keys, stamps: [String: HLCTimestamp]) -> String {
        let fallback = stamps["*"]
        if columns.allSatisfy({ (stamps[$0] ?? fallback) == created }) {
            return "{\"*\":\"" + created.description + "\"}"  // a stamp's text needs no escaping
        }
        var map = ["*": created.description]
        for column in columns {
            if let stamp = stamps[column] ?? fallback, stamp != created { map[column] = stamp.description }
        }
        return json(map)
    }

    /// The `"#hlc"` text to write for `stamps` over a row's `old` text, made to differ from it
    /// (a space added) when the stamps did not change: the journal's trigger stamps a row
    /// whose `"#hlc"` an update leaves as it was as a fresh local edit, newer than everything.
    static func stampText(_ stamps: [String: HLCTimestamp], replacing old: String?) -> String {
        let text = json(stamps.mapValues(\.description))
        return text == old ? text + " " : text
    }

    /// A row's `"#hlc"` JSON → stamps.
    static func stamps(_ json: String) -> [String: HLCTimestamp]? {
        guard let object = try? WireJSONReader.stringMap(json) else { return nil }
        return object.compactMapValues { HLCTimestamp($0) }
    }

    static func json(_ stamps: [String: String]) -> String {
        var writer = WireJSON()
        writer.object(stamps) { $0.string($1) }
        return writer.text
    }
}

extension Data {
    var utf8Text: String { String(decoding: self, as: UTF8.self) }
}

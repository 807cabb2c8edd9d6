import Foundation
import GRDB
import TandemSchema
import TandemWire

/// Pulled values this store's schema cannot show (an entity, attribute or relationship of a
/// newer schema, an enum raw value none of its cases), kept aside in ``SyncStore``'s
/// `tandem_sync_kept` for a schema that can; and what an insert gets for the columns it
/// lacks.
extension ChangeApplier {
    /// What a pulled insert without `column` (of `attribute`) gets: see ``insertDefaults``.
    static func insertDefault(of attribute: Schema.Attribute, column: Schema.Column) -> WireValue {
        if let text = attribute.defaultValue, attribute.columns.count == 1 {
            switch Schema.Literal(defaultValue: text, for: column) {
            case .integer(let value): return .integer(value)
            case .real(let value): return .real(value)
            case .text(let value): return .text(value)
            case .null, nil: break
            }
            if case .enumeration(let enumeration) = attribute.type, let value = EnumCases.defaultValue(text, of: enumeration) { return value }
        }
        switch column.sqlType {
        case .integer: return .integer(0)
        case .real: return .real(0)
        case .text: return .text("")
        case .blob: return .bytes(Data())
        }
    }

    /// Whether this store can show `value` in column `column` of `entity`: a column of its
    /// schema, and for an enum column a raw value of a case it knows.
    func isShown(_ column: String, _ value: WireValue, of entity: String, known: [String: Schema.Column]) -> Bool {
        Self.shows(column, value, known: known, cases: enumCases[entity])
    }

    /// ``isShown(_:_:of:known:)`` with the entity's enum columns looked up once.
    static func shows(_ column: String, _ value: WireValue, known: [String: Schema.Column], cases: [String: EnumCases]?) -> Bool {
        known[column] != nil && (cases?[column]?.contains(value) ?? true)
    }

    /// The values of `change` this store can show (see ``isShown(_:_:of:known:)``); the
    /// others are kept aside for a schema that has them, value by value with their stamps.
    func keepUnknownColumns(
        of change: WireChange, _ entry: LogEntry, stamps: [String: HLCTimestamp], known: [String: Schema.Column], _ db: Database,
        _ outcome: inout Outcome
    ) throws -> [String: WireValue] {
        let unknown = Set(change.values.filter { !isShown($0.key, $0.value, of: change.entity, known: known) }.keys)
        try keep(change, fields: unknown, entry, stamps: stamps, db, &outcome)
        return change.values.filter { !unknown.contains($0.key) }
    }

    /// Keeps `change` (its `fields` only, when given) for a schema that can show it, field by
    /// field: each value with its stamp, a link under `<relationship>#<member>`, an insert's
    /// or a delete's existence under `*`. A delete forgets what was kept of the record
    /// before it.
    func keep(
        _ change: WireChange, fields: Set<String>?, _ entry: LogEntry, stamps: [String: HLCTimestamp], _ db: Database, _ outcome: inout Outcome
    ) throws {
        func store(_ field: String, _ part: WireChange, _ stamp: HLCTimestamp) throws {
            guard keepsUnknownValues else { return }
            // Under its wire name: a later local rename does not change it.
            let wire = naming.isIdentity ? part : naming.toWire(part)
            let wireField = part.kind == .update ? naming.wireColumn(field, of: change.entity) : field
            try SyncStore.keep(
                record: change.record, field: wireField, stamp: stamp, position: entry.position, schemaVersion: entry.schemaVersion, change: wire, at: now, db)
            outcome.kept += 1
            keptAny.value = true
        }
        let star = stamps[WireChange.deleteStampKey]
        switch change.kind {
        case .delete:
            guard let star else { return }
            try SyncStore.forgetKept(record: change.record, through: star, db)
            try store(WireChange.deleteStampKey, change, star)
        case .link, .unlink:
            guard let (name, member) = change.values.first, case .text(let target) = member, let stamp = star ?? stamps.values.first else { return }
            try store(name + "#" + target, change, stamp)
        case .insert, .update:
            if fields == nil, change.kind == .insert, let created = star {
                try store(
                    WireChange.deleteStampKey,
                    WireChange(record: change.record, entity: change.entity, kind: .insert, values: [:], stamps: [WireChange.deleteStampKey: created.description]),
                    created)
            }
            for (column, value) in change.values where fields?.contains(column) ?? true {
                guard let stamp = stamps[column] ?? star else { continue }
                try store(
                    column, WireChange(record: change.record, entity: change.entity, kind: .update, values: [column: value], stamps: [column: stamp.description]),
                    stamp)
            }
        }
    }
}

import TandemConflicts
public import TandemSchema
public import TandemWire

/// What a schema version means for the pushes made with it, worked out once per push from the
/// schema: which entities hold unique values, which take part in many-to-many links, which
/// references may point at a record merged away; and what a push of some changes reads
/// before it runs (``reads(for:)``).
///
/// ```swift
/// let plan = PushPlan(schema: schema, datasetName: "todos")
/// let keys = plan.reads(for: changes)
/// ```
public struct PushPlan: Sendable {
    let datasetName: String
    let schema: Schema
    let unique: UniqueMerge
    /// Many-to-many links: a link is a field of its owner, `<relationship>#<member id>`.
    let linkOwnerEntities: Set<String>
    let linkMemberEntities: Set<String>
    /// References to records of unique entities, which a merge may have taken away.
    let mergeableReferences: [String: [(column: String, destination: String)]]

    public init(schema: Schema, datasetName: String) {
        self.datasetName = datasetName
        self.schema = schema
        let unique = UniqueMerge(schema: schema)
        self.unique = unique
        var owners: Set<String> = [], members: Set<String> = []
        for entity in schema.entities {
            for relationship in entity.relationships {
                guard case .joinTable(_, "source", _) = schema.storage(of: relationship, in: entity) else { continue }
                owners.insert(entity.name)
                members.insert(relationship.destination)
            }
        }
        linkOwnerEntities = owners
        linkMemberEntities = members
        var references: [String: [(column: String, destination: String)]] = [:]
        if !unique.attributes.isEmpty {
            for entity in schema.entities {
                let targets = entity.relationships.filter { !$0.isToMany && unique.hasUniqueValues($0.destination) }.map { (column: $0.name, destination: $0.destination) }
                if !targets.isEmpty { references[entity.name] = targets }
            }
        }
        mergeableReferences = references
    }

    /// What a push of `changes` (validated) reads, named before it runs: the records its
    /// updates, deletes and links change and the members its links name; whether those of
    /// unique entities, and the records its references name, were merged away; the link owners
    /// of the members it deletes. A new record is not read: an insert writes it as new, and
    /// reads it only when the storage has it. What depends on what is read (a merge's other
    /// record, say) is read in a later round.
    public func reads(for changes: [WireChange]) -> PushKeys {
        var keys = PushKeys()
        for change in changes {
            let hasUniqueValues = unique.hasUniqueValues(change.entity)
            if change.kind != .insert { keys.records.insert(change.record) }
            if hasUniqueValues && change.kind != .insert && change.kind != .delete { keys.merged.insert(change.record) }
            if change.kind == .delete && linkMemberEntities.contains(change.entity) { keys.linkOwners.insert(change.record) }
            if change.kind.isLink, let (relationship, member) = change.values.first, case .text(let id) = member,
                let destination = schema.entity(named: change.entity)?.relationship(named: relationship)?.destination
            {
                let uri = "tandem://\(datasetName)/\(destination)/\(id)"
                keys.records.insert(uri)
                if unique.hasUniqueValues(destination) { keys.merged.insert(uri) }
            }
            if change.kind == .insert || change.kind == .update, let targets = mergeableReferences[change.entity] {
                for (column, destination) in targets {
                    if case .text(let id)? = change.values[column] { keys.merged.insert("tandem://\(datasetName)/\(destination)/\(id)") }
                }
            }
        }
        return keys
    }
}

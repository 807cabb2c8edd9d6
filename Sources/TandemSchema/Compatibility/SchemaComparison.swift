extension Schema {
    /// Every change from `baseline` to `candidate`, each judged by a ``CompatibilityRule``:
    /// safe changes included (for a changelog), ignores not applied.
    ///
    /// Entities, attributes, composite fields, enum cases and relationships are matched by
    /// name (entities, attributes and relationships also by `originalName`). Use ``CompatibilityCheck`` for a release
    /// check against several baselines with ignores.
    ///
    /// ```swift
    /// let findings = Schema.compare(baseline: released, candidate: next)
    /// let breaking = findings.filter { $0.verdict == .breaking }
    /// ```
    public static func compare(baseline: Schema, candidate: Schema) -> [SchemaFinding] {
        var comparison = SchemaComparison()
        comparison.compare(baseline, candidate)
        return comparison.findings
    }
}

/// Walks two schemas side by side and collects findings.
struct SchemaComparison {
    private(set) var findings: [SchemaFinding] = []
    /// Entity name → identity in the baseline and in the candidate: a relationship points at
    /// an entity's identity, so a renamed destination is the same destination.
    private var oldIdentities: [String: String] = [:]
    private var newIdentities: [String: String] = [:]

    /// Where a type sits, which decides the rule IDs of nested changes.
    enum Context {
        case attribute, compositeField, collectionElement
    }

    private mutating func add(
        _ rule: CompatibilityRule, _ path: String, _ message: String,
        verdict: Verdict? = nil, hint: String? = nil
    ) {
        findings.append(SchemaFinding(rule, path, message, verdict: verdict, hint: hint))
    }

    // MARK: Entities

    // Every lookup below goes through a dictionary: a schema's size is bounded by the server's
    // limits, not by what a scan per member could afford (the check runs in time linear in
    // the two schemas' sizes).

    mutating func compare(_ old: Schema, _ new: Schema) {
        oldIdentities = Self.byName(old.entities, \.name).mapValues(\.identity)
        newIdentities = Self.byName(new.entities, \.name).mapValues(\.identity)
        let (pairs, removed, added) = Self.matchEntities(old.entities, new.entities)
        for (previous, entity) in pairs {
            let renamedFrom = previous.name == entity.name ? nil : previous.name
            if renamedFrom == nil, previous.identity != entity.identity {
                // The same name, another first name: what its records are stored under changed.
                add(
                    .entityRenamed, entity.name,
                    "entity '\(entity.name)' synced as '\(previous.identity)' and would sync as '\(entity.identity)' (its originalName changed from \(previous.originalName.map { "\"\($0)\"" } ?? "none") to \(entity.originalName.map { "\"\($0)\"" } ?? "none")): record URIs would change and old clients would not read its records",
                    verdict: .breaking,
                    hint: "Keep @Model(originalName: \"\(previous.identity)\") (originalName names the first name an entity synced under, for good).")
            }
            if let originalName = renamedFrom {
                if previous.identity == entity.identity {
                    add(
                        .entityRenamed, entity.name,
                        "entity '\(originalName)' was renamed to '\(entity.name)'; both store and sync their records as '\(entity.identity)' (originalName: \"\(entity.identity)\")")
                } else {
                    add(
                        .entityRenamed, entity.name,
                        "entity '\(originalName)' (synced as '\(previous.identity)') was renamed to '\(entity.name)' with originalName \"\(entity.originalName ?? "")\", so its records would sync as '\(entity.identity)': old clients would not read them",
                        verdict: .breaking,
                        hint: "originalName names the first name an entity synced under: use @Model(originalName: \"\(previous.identity)\") (kept through every later rename).")
                }
            }
            compare(previous, entity)
        }
        // Added entities by shape, in order: a removed entity of the same shape was renamed
        // without originalName.
        var addedByShape = ShapeQueues(added, key: Self.shape)
        var renamed = Set<String>()
        for entity in removed {
            if let twin = addedByShape.take(Self.shape(entity)) {
                let declared = twin.originalName.map { "with originalName \"\($0)\", which is not its first name" } ?? "without originalName"
                add(
                    .entityRenamed, entity.name,
                    "entity '\(entity.name)' was renamed to '\(twin.name)' (same attributes and relationships) \(declared): its records would sync as '\(twin.identity)' instead of '\(entity.identity)'",
                    verdict: .breaking,
                    hint: "Declare the rename: @Model(originalName: \"\(entity.identity)\") final class \(twin.name) (its records then keep their URIs and sync under the first name).")
                renamed.insert(twin.name)
            } else {
                add(.entityRemoved, entity.name, "entity '\(entity.name)' was removed")
            }
        }
        for entity in added where !renamed.contains(entity.name) {
            add(.entityAdded, entity.name, "entity '\(entity.name)' was added")
        }
    }

    /// Pairs each new entity with the old one of the same identity (its records are the same
    /// records, whatever the class is called now), else with the old one of its name (its
    /// originalName changed) or the one its originalName names (a later name); the rest were
    /// removed or added. Pairs in the order of the new entities.
    private static func matchEntities(
        _ old: [Schema.Entity], _ new: [Schema.Entity]
    )
        -> (pairs: [(old: Schema.Entity, new: Schema.Entity)], removed: [Schema.Entity], added: [Schema.Entity])
    {
        let oldByIdentity = byName(old, \.identity)
        let oldByName = byName(old, \.name)
        var paired = Set<String>()
        var partner: [Int: Schema.Entity] = [:]
        for (index, entity) in new.enumerated() {
            if let previous = oldByIdentity[entity.identity], paired.insert(previous.name).inserted { partner[index] = previous }
        }
        for (index, entity) in new.enumerated() where partner[index] == nil {
            for name in [entity.name, entity.originalName].compactMap({ $0 }) {
                if let previous = oldByName[name], paired.insert(previous.name).inserted {
                    partner[index] = previous
                    break
                }
            }
        }
        let pairs = new.indices.compactMap { index in partner[index].map { ($0, new[index]) } }
        let added = new.indices.filter { partner[$0] == nil }.map { new[$0] }
        return (pairs, old.filter { !paired.contains($0.name) }, added)
    }

    /// What an entity and its renamed twin share: attributes' shapes and relationships' names.
    private static func shape(_ entity: Schema.Entity) -> [String] {
        entity.attributes.map(\.shapeKey) + ["|"] + entity.relationships.map(\.name)
    }

    /// Members by name (the first of a repeated name; the server refuses repeated names).
    private static func byName<Member>(_ members: [Member], _ name: (Member) -> String) -> [String: Member] {
        Dictionary(members.map { (name($0), $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Members grouped by a key, each group in order, taken from the front.
    private struct ShapeQueues<Key: Hashable, Member> {
        private var queues: [Key: (members: [Member], next: Int)] = [:]

        init(_ members: [Member], key: (Member) -> Key) {
            for member in members { queues[key(member), default: ([], 0)].members.append(member) }
        }

        /// The first member with `key` not taken yet.
        mutating func take(_ key: Key) -> Member? {
            guard let queue = queues[key], queue.next < queue.members.count else { return nil }
            queues[key]!.next += 1
            return queue.members[queue.next]
        }
    }

    /// Pairs each new member with the old one of the same name, or with the one its
    /// `originalName` names (a declared rename); the rest were removed or added.
    private static func match<Member>(
        _ old: [Member], _ new: [Member], name: (Member) -> String, originalName: (Member) -> String?
    )
        -> (pairs: [(old: Member, new: Member, renamedFrom: String?)], removed: [Member], added: [Member])
    {
        let newNames = Set(new.map(name))
        let oldByName = byName(old, name)
        let unmatched = old.filter { !newNames.contains(name($0)) }
        var unmatchedByName = ShapeQueues(unmatched, key: name)
        var taken = Set<String>()
        var pairs: [(old: Member, new: Member, renamedFrom: String?)] = []
        var added: [Member] = []
        for member in new {
            if let previous = oldByName[name(member)] {
                pairs.append((previous, member, nil))
            } else if let originalName = originalName(member), let previous = unmatchedByName.take(originalName) {
                pairs.append((previous, member, originalName))
                taken.insert(originalName)
            } else if let previous = unmatched.first(where: {
                !taken.contains(name($0)) && name($0) != name(member) && (originalName($0) ?? name($0)) == (originalName(member) ?? name(member))
            }) {
                // Renamed again (both keep the first name), or back to it: one name on the wire.
                pairs.append((previous, member, name(previous)))
                taken.insert(name(previous))
            } else {
                added.append(member)
            }
        }
        return (pairs, unmatched.filter { !taken.contains(name($0)) }, added)
    }

    private mutating func compare(_ old: Schema.Entity, _ new: Schema.Entity) {
        let (pairs, unmatchedOld, added) = Self.match(old.attributes, new.attributes, name: \.name, originalName: \.originalName)
        for (previous, attribute, renamedFrom) in pairs {
            let path = "\(new.name).\(attribute.name)"
            if renamedFrom == nil, previous.identity != attribute.identity {
                // The same name, another first name: what it syncs under changed.
                add(
                    .attributeRenamed, path,
                    "attribute '\(attribute.name)' synced as '\(previous.identity)' and would sync as '\(attribute.identity)' (its originalName changed from \(previous.originalName.map { "\"\($0)\"" } ?? "none") to \(attribute.originalName.map { "\"\($0)\"" } ?? "none")): old clients would not read it",
                    verdict: .breaking,
                    hint: "Keep originalName: \"\(previous.identity)\" (originalName names the first name an attribute synced under, for good).")
            }
            if let originalName = renamedFrom {
                if previous.identity == attribute.identity {
                    add(
                        .attributeRenamed, path,
                        "attribute '\(originalName)' was renamed to '\(attribute.name)'; both sync as '\(attribute.identity)' (originalName: \"\(attribute.identity)\")")
                } else {
                    add(
                        .attributeRenamed, path,
                        "attribute '\(originalName)' (synced as '\(previous.identity)') was renamed to '\(attribute.name)' with originalName \"\(attribute.originalName ?? "")\", so it would sync as '\(attribute.identity)': old clients would not read it",
                        verdict: .breaking,
                        hint: "originalName names the first name an attribute synced under: use @Attribute(originalName: \"\(previous.identity)\") (kept through every later rename).")
                }
            }
            compare(previous, attribute, path: path)
        }
        var firstAddedByShape: [String: Schema.Attribute] = [:]
        for attribute in added where firstAddedByShape[attribute.shapeKey] == nil { firstAddedByShape[attribute.shapeKey] = attribute }
        for attribute in unmatchedOld {
            let path = "\(old.name).\(attribute.name)"
            if let twin = firstAddedByShape[attribute.shapeKey] {
                add(
                    .attributeRemoved, path,
                    "attribute '\(attribute.name)' was removed; '\(twin.name)' of the same type was added — a possible undeclared rename",
                    hint: "If '\(twin.name)' replaces '\(attribute.name)', declare it: @Attribute(originalName: \"\(attribute.identity)\") var \(twin.name) (it then syncs under its first name).")
            } else {
                add(.attributeRemoved, path, "attribute '\(attribute.name)' (\(attribute.type.summary)) was removed")
            }
        }
        for attribute in added {
            let path = "\(new.name).\(attribute.name)"
            if attribute.isOptional {
                add(.attributeAddedOptional, path, "optional attribute '\(attribute.name)' was added")
            } else if let defaultValue = attribute.defaultValue {
                add(.attributeAddedWithDefault, path, "attribute '\(attribute.name)' was added with default \(defaultValue); records from older clients get that default")
            } else {
                add(.attributeAddedRequired, path, "required attribute '\(attribute.name)' was added without a default; records from older clients have no value for it")
            }
        }
        compareRelationships(old, new)
    }

    // MARK: Attributes

    private mutating func compare(_ old: Schema.Attribute, _ new: Schema.Attribute, path: String) {
        for (option, rule) in [
            (Schema.Attribute.Option.indexed, CompatibilityRule.indexChanged),
            (.preserveValueOnDeletion, .preserveOnDeletionChanged),
        ] {
            let before = old.options.contains(option), after = new.options.contains(option)
            if before != after {
                add(rule, path, "@Attribute(.\(option.rawValue)) was \(after ? "added" : "removed")")
            }
        }
        if !old.isUnique && new.isUnique {
            add(.uniqueAdded, path, "@Attribute(.unique) was added; older clients may already hold duplicates")
        } else if old.isUnique && !new.isUnique {
            add(.uniqueRemoved, path, "@Attribute(.unique) was removed; new clients may create duplicates older clients refuse")
        }
        if old.isOptional && !new.isOptional {
            add(.attributeOptionalToRequired, path, "attribute '\(new.name)' changed from optional to required; older clients send nil")
        } else if !old.isOptional && new.isOptional {
            let hadDefault = old.defaultValue != nil
            add(
                .attributeRequiredToOptional, path,
                "attribute '\(new.name)' changed from required to optional; older clients cannot store nil"
                    + (hadDefault ? " and store their default (\(old.defaultValue!)) instead" : ""),
                verdict: hadDefault ? .warning : .breaking)
        }
        if old.defaultValue != new.defaultValue {
            add(
                .attributeDefaultChanged, path,
                "default value changed from \(old.defaultValue ?? "none") to \(new.defaultValue ?? "none")")
        }
        compareType(old.type, new.type, path: path, context: .attribute)
    }

    // MARK: Types

    mutating func compareType(_ old: Schema.AttributeType, _ new: Schema.AttributeType, path: String, context: Context) {
        switch (old, new) {
        case (.scalar(let a), .scalar(let b)):
            guard a != b else { return }
            compareScalars(a, b, path: path, context: context)
        case (.composite(let a), .composite(let b)):
            compareFields(a.fields, b.fields, path: path, context: context == .collectionElement ? .collectionElement : .compositeField)
            if a.typeName != b.typeName && a.fields == b.fields {
                add(.compositeRenamed, path, "composite type \(a.typeName) was renamed to \(b.typeName); its fields are unchanged")
            }
        case (.enumeration(let a), .enumeration(let b)):
            compareEnums(a, b, path: path)
        case (.collection(let a, let aElement), .collection(let b, let bElement)):
            // Composite elements are compared field by field (a renamed element struct is
            // the same JSON); anything else changes with the collection's type name.
            if case .composite? = aElement, case .composite? = bElement, let aElement, let bElement,
                Self.container(of: a) == Self.container(of: b)
            {
                compareType(aElement, bElement, path: path, context: .collectionElement)
            } else if a != b {
                add(.collectionTypeChanged, path, "collection type changed from \(a) to \(b)")
            } else if let aElement, let bElement {
                compareType(aElement, bElement, path: path, context: .collectionElement)
            }
        case (.json(let a, let aShape), .json(let b, let bShape)):
            if a != b {
                if context == .attribute {
                    add(.attributeTypeChanged, path, "JSON-stored type changed from \(a) to \(b)")
                } else {
                    retyped(path, context, "JSON-stored type changed from \(a) to \(b)")
                }
            } else if let aShape, let bShape, aShape != bShape {
                add(.enumWithoutRawValueChanged, path, "\(b), stored as JSON, changed from { \(aShape) } to { \(bShape) }")
            }
        case (.scalar, .enumeration(let e)) where old.sqlType == new.sqlType, (.enumeration(let e), .scalar) where old.sqlType == new.sqlType:
            retyped(
                path, context, "type changed between \(old.summary) and \(new.summary) (enum \(e.typeName)); the stored values are the same kind, but one side accepts values the other cannot decode")
        default:
            if context == .attribute {
                add(.storageShapeChanged, path, "storage changed from \(old.summary) to \(new.summary)")
            } else {
                retyped(path, context, "type changed from \(old.summary) to \(new.summary)")
            }
        }
    }

    /// `Array<Link>` → `Array`; `Dictionary<String, Link>` → `Dictionary<String`: the
    /// container and, for a dictionary, its key type.
    private static func container(of typeName: String) -> Substring {
        guard let open = typeName.firstIndex(of: "<") else { return Substring(typeName) }
        if typeName.hasPrefix("Dictionary<"), let comma = typeName.firstIndex(of: ",") { return typeName[..<comma] }
        return typeName[..<open]
    }

    private mutating func retyped(_ path: String, _ context: Context, _ message: String, verdict: Verdict? = nil) {
        switch context {
        case .attribute: add(.attributeTypeChanged, path, message, verdict: verdict)
        case .compositeField: add(.compositeFieldRetyped, path, message, verdict: verdict)
        case .collectionElement: add(.collectionElementFieldRetyped, path, message, verdict: verdict)
        }
    }

    private mutating func compareScalars(_ a: Schema.ScalarType, _ b: Schema.ScalarType, path: String, context: Context) {
        let message = "type changed from \(a.rawValue) to \(b.rawValue)"
        guard context == .attribute else {
            let sameWidth = a.numericFamily.map { from in b.numericFamily.map { $0 == from } ?? false } ?? false
            retyped(
                path, context, message + (sameWidth ? " (the same width on 64-bit platforms; 32-bit clients overflow)" : ""),
                verdict: sameWidth ? .warning : nil)
            return
        }
        if let from = a.numericFamily, let to = b.numericFamily, from.family == to.family {
            if from.width == to.width {
                add(.attributeTypeChanged, path, message + " (the same width on 64-bit platforms; 32-bit clients overflow)", verdict: .warning)
            } else if from.width < to.width {
                add(.attributeNumericWidened, path, message + "; older clients overflow or lose precision on new values")
            } else {
                add(.attributeNumericNarrowed, path, message + "; values from older clients are truncated")
            }
        } else {
            add(.attributeTypeChanged, path, message)
        }
    }

    private mutating func compareFields(_ old: [Schema.Field], _ new: [Schema.Field], path: String, context: Context) {
        let inCollection = context == .collectionElement
        let oldNames = Set(old.map(\.name))
        let newByName = Self.byName(new, \.name)
        let addedFields = new.filter { !oldNames.contains($0.name) }
        var addedByShape = ShapeQueues(addedFields) { FieldShape(type: $0.type, isOptional: $0.isOptional) }
        var renamed = Set<String>()
        for field in old {
            let fieldPath = "\(path).\(field.name)"
            guard let counterpart = newByName[field.name] else {
                if let twin = addedByShape.take(FieldShape(type: field.type, isOptional: field.isOptional)) {
                    add(
                        inCollection ? .collectionElementFieldRenamed : .compositeFieldRenamed, fieldPath,
                        "field '\(field.name)' was renamed to '\(twin.name)'")
                    renamed.insert(twin.name)
                } else {
                    add(
                        inCollection ? .collectionElementFieldRemoved : .compositeFieldRemoved, fieldPath,
                        "field '\(field.name)' was removed")
                }
                continue
            }
            if field.isOptional != counterpart.isOptional {
                retyped(fieldPath, context, "field '\(field.name)' changed from \(field.isOptional ? "optional to required" : "required to optional")")
            }
            compareType(field.type, counterpart.type, path: fieldPath, context: context)
        }
        for field in addedFields where !renamed.contains(field.name) {
            let fieldPath = "\(path).\(field.name)"
            if inCollection {
                add(
                    .collectionElementFieldAdded, fieldPath,
                    "\(field.isOptional ? "optional" : "required") field '\(field.name)' was added to the element",
                    verdict: field.isOptional ? .safe : .breaking)
            } else {
                add(
                    .compositeFieldAdded, fieldPath,
                    "\(field.isOptional ? "optional" : "required") field '\(field.name)' was added",
                    verdict: field.isOptional ? .warning : .breaking)
            }
        }
    }

    private mutating func compareEnums(_ a: Schema.Enumeration, _ b: Schema.Enumeration, path: String) {
        if a.rawType != b.rawType {
            add(.enumRawTypeChanged, path, "enum \(b.typeName) raw type changed from \(a.rawType.rawValue) to \(b.rawType.rawValue)")
            return
        }
        guard let oldCases = a.cases, let newCases = b.cases else {
            // Both unknown: nothing to compare and nothing changed that the schema shows.
            if (a.cases == nil) != (b.cases == nil) {
                add(
                    .enumCasesUnknown, path,
                    "the \(b.cases == nil ? "candidate" : "baseline") does not list the cases of enum \(b.typeName) (a schema a running app recorded lists only a CaseIterable enum's), so they cannot be compared with the other version's"
                )
            }
            return
        }
        let newByName = Self.byName(newCases, \.name)
        let newRawValues = Set(newCases.map(\.rawValue))
        let oldNames = Set(oldCases.map(\.name))
        let oldRawValues = Set(oldCases.map(\.rawValue))
        for old in oldCases {
            if let new = newByName[old.name] {
                if new.rawValue != old.rawValue {
                    add(
                        .enumCaseRawValueChanged, "\(path).\(old.name)",
                        "case \(old.name) raw value changed from \(old.rawValue.debugDescription) to \(new.rawValue.debugDescription)")
                }
            } else if !newRawValues.contains(old.rawValue) {
                add(.enumCaseRemoved, "\(path).\(old.name)", "case \(old.name) (raw value \(old.rawValue.debugDescription)) was removed")
            }
        }
        for new in newCases where !oldNames.contains(new.name) && !oldRawValues.contains(new.rawValue) {
            add(.enumCaseAdded, "\(path).\(new.name)", "case \(new.name) (raw value \(new.rawValue.debugDescription)) was added")
        }
    }

    // MARK: Relationships

    private mutating func compareRelationships(_ old: Schema.Entity, _ new: Schema.Entity) {
        let (pairs, removed, added) = Self.match(old.relationships, new.relationships, name: \.name, originalName: \.originalName)
        for (previous, relationship, renamedFrom) in pairs {
            let path = "\(new.name).\(relationship.name)"
            if let originalName = renamedFrom {
                add(.relationshipRenamed, path, "relationship '\(originalName)' was renamed to '\(relationship.name)'")
            }
            compare(previous, relationship, path: path)
        }
        for relationship in removed {
            add(.relationshipRemoved, "\(old.name).\(relationship.name)", "relationship '\(relationship.name)' to \(relationship.destination) was removed")
        }
        for relationship in added {
            let required = !relationship.isToMany && !relationship.isOptional
            add(
                .relationshipAdded, "\(new.name).\(relationship.name)",
                "\(required ? "required" : relationship.isToMany ? "to-many" : "optional") relationship '\(relationship.name)' to \(relationship.destination) was added",
                verdict: required ? .breaking : .safe)
        }
    }

    private mutating func compare(_ old: Schema.Relationship, _ new: Schema.Relationship, path: String) {
        if old.cardinality != new.cardinality {
            add(.relationshipCardinalityChanged, path, "relationship changed from \(old.cardinality.rawValue) to \(new.cardinality.rawValue)")
        }
        let (oldTarget, newTarget) = (oldIdentities[old.destination] ?? old.destination, newIdentities[new.destination] ?? new.destination)
        if oldTarget != newTarget {
            let names =
                old.destination == new.destination
                ? "records synced as \(newTarget) instead of \(oldTarget) (\(new.destination)'s originalName changed)" : "\(new.destination) instead of \(old.destination)"
            add(.relationshipTargetChanged, path, "relationship now points at \(names)")
        }
        if old.deleteRule != new.deleteRule {
            add(
                .relationshipDeleteRuleChanged, path, "delete rule changed from .\(old.deleteRule.rawValue) to .\(new.deleteRule.rawValue)",
                verdict: new.deleteRule == .deny ? .breaking : .warning)
        }
        if old.inverse != new.inverse {
            add(.relationshipInverseChanged, path, "inverse changed from \(old.inverse ?? "none") to \(new.inverse ?? "none")")
        }
        if !old.isToMany && !new.isToMany && old.isOptional != new.isOptional {
            add(
                new.isOptional ? .attributeRequiredToOptional : .attributeOptionalToRequired, path,
                "to-one relationship changed from \(old.isOptional ? "optional to required" : "required to optional")")
        }
    }
}

/// What a composite field and its renamed twin share.
private struct FieldShape: Hashable {
    var type: Schema.AttributeType
    var isOptional: Bool
}

extension Schema.Attribute {
    /// What two attributes share when one may be the other renamed.
    fileprivate var shapeKey: String {
        "\(type.summary)|\(isOptional)"
    }
}

extension Schema.ScalarType {
    /// Integers by signedness and floats, with their width in bits (`Int`/`UInt`: 64).
    fileprivate var numericFamily: (family: Int, width: Int)? {
        switch self {
        case .int8: (0, 8)
        case .int16: (0, 16)
        case .int32: (0, 32)
        case .int64, .int: (0, 64)
        case .uint8: (1, 8)
        case .uint16: (1, 16)
        case .uint32: (1, 32)
        case .uint64, .uint: (1, 64)
        case .float: (2, 32)
        case .double: (2, 64)
        default: nil
        }
    }
}

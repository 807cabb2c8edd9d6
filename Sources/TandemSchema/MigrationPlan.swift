/// The steps that bring a store written with one schema up to another, or why that is refused.
///
/// Automatic, lossless changes only: new entities, new optional or defaulted attributes,
/// renames declared with `originalName`, a dropped unique option, a new unique option (which
/// fails at apply time if existing rows collide), changed defaults and enum cases added.
/// Everything else — a removed attribute or entity, a type change, a reshaped composite, an
/// optional made required, removed enum cases — is refused, naming entity, attribute and change.
///
/// ```swift
/// let plan = try MigrationPlan(from: storedSchema, to: currentSchema)
/// for step in plan.steps { print(step) }       // .addAttribute(entity: "Todo", …)
/// ```
public struct MigrationPlan: Sendable, Hashable {
    /// One schema change to apply to the store.
    public enum Step: Sendable, Hashable {
        /// Create the entity's table (and its unique indexes).
        case createEntity(Schema.Entity)
        /// Add the attribute's columns; existing rows get its default (or NULL when optional).
        case addAttribute(entity: String, Schema.Attribute)
        /// Rename the attribute's columns from `from` to the attribute's name.
        case renameAttribute(entity: String, from: String, to: Schema.Attribute)
        /// Create the unique index of the attribute.
        case addUniqueIndex(entity: String, attribute: Schema.Attribute)
        /// Drop the unique index of the attribute (named as in the stored schema).
        case dropUniqueIndex(entity: String, attribute: Schema.Attribute)
        /// Create the (non-unique) index of an `.indexed` attribute.
        case addIndex(entity: String, attribute: Schema.Attribute)
        /// Drop the index of an attribute that is no longer `.indexed`.
        case dropIndex(entity: String, attribute: Schema.Attribute)
        /// Add a relationship's storage: a foreign-key column or a join table.
        case addRelationship(entity: String, Schema.Relationship)
    }

    /// A change that cannot be applied automatically.
    public struct Refusal: Sendable, Hashable, CustomStringConvertible {
        public var entity: String
        public var attribute: String?
        public var change: String
        public init(entity: String, attribute: String?, change: String) {
            self.entity = entity
            self.attribute = attribute
            self.change = change
        }
        public var description: String {
            "\(entity)\(attribute.map { ".\($0)" } ?? ""): \(change)"
        }
    }

    public var steps: [Step]

    /// `true` when the stored schema already matches (no step, schema JSON unchanged or only
    /// metadata such as defaults changed).
    public var isEmpty: Bool { steps.isEmpty }

    /// Plans the migration from `stored` (the file's schema) to `current` (the models').
    ///
    /// - Throws: ``SchemaError`` with code ``SchemaError/Code/incompatibleChange`` listing every
    ///   ``Refusal``.
    public init(from stored: Schema, to current: Schema) throws {
        var steps: [Step] = []
        var refusals: [Refusal] = []
        for entity in stored.entities where current.entity(named: entity.name) == nil {
            refusals.append(
                Refusal(
                    entity: entity.name, attribute: nil,
                    change: "entity is in the store but not in the models; removing an entity would lose its data (keep the model, or migrate by hand through container.write)"))
        }
        for entity in current.entities {
            guard let old = stored.entity(named: entity.name) else {
                steps.append(.createEntity(entity))
                continue
            }
            Self.plan(entity: entity, old: old, steps: &steps, refusals: &refusals)
        }
        if !refusals.isEmpty {
            let list = refusals.map { "- \($0)" }.joined(separator: "\n")
            throw SchemaError(
                .incompatibleChange,
                "the store's schema cannot be migrated automatically; the file was left untouched:\n\(list)",
                changes: refusals)
        }
        self.steps = steps
    }

    private static func plan(entity: Schema.Entity, old: Schema.Entity, steps: inout [Step], refusals: inout [Refusal]) {
        var matchedOld: Set<String> = []
        for attribute in entity.attributes {
            let previous: Schema.Attribute
            if let same = old.attribute(named: attribute.name) {
                previous = same
            } else if let originalName = attribute.originalName, let renamed = old.attribute(named: originalName),
                entity.attribute(named: originalName) == nil
            {
                previous = renamed
                steps.append(.renameAttribute(entity: entity.name, from: originalName, to: attribute))
            } else if let originalName = attribute.originalName,
                let renamed = old.attributes.first(where: { $0.originalName == originalName && $0.name != attribute.name }),
                entity.attribute(named: renamed.name) == nil
            {
                // Renamed again: both keep the first name as originalName.
                previous = renamed
                steps.append(.renameAttribute(entity: entity.name, from: renamed.name, to: attribute))
            } else {
                if attribute.isOptional || attribute.defaultValue != nil {
                    steps.append(.addAttribute(entity: entity.name, attribute))
                } else {
                    refusals.append(
                        Refusal(
                            entity: entity.name, attribute: attribute.name,
                            change:
                                "new attribute is neither optional nor has a default value, so existing records would have no value (make it optional, give it a default, or use originalName if it is a rename)"
                        ))
                }
                continue
            }
            matchedOld.insert(previous.name)
            compare(entity: entity.name, attribute: attribute, previous: previous, steps: &steps, refusals: &refusals)
        }
        for attribute in old.attributes where !matchedOld.contains(attribute.name) {
            refusals.append(
                Refusal(
                    entity: entity.name, attribute: attribute.name,
                    change: "attribute was removed; its stored values would be lost (keep it, mark a renamed property with @Attribute(originalName: \"\(attribute.name)\"), or migrate by hand)"))
        }
        for relationship in entity.relationships {
            guard let previous = old.relationship(named: relationship.name) else {
                steps.append(.addRelationship(entity: entity.name, relationship))
                continue
            }
            if previous.destination != relationship.destination || previous.cardinality != relationship.cardinality
                || previous.inverse != relationship.inverse
            {
                refusals.append(
                    Refusal(
                        entity: entity.name, attribute: relationship.name,
                        change: "relationship changed from \(previous.summary) to \(relationship.summary); its stored links would not match"))
            }
        }
        for relationship in old.relationships where entity.relationship(named: relationship.name) == nil {
            refusals.append(
                Refusal(
                    entity: entity.name, attribute: relationship.name,
                    change: "relationship was removed; its stored links would be lost (keep it, or migrate by hand)"))
        }
    }

    private static func compare(
        entity: String, attribute: Schema.Attribute, previous: Schema.Attribute,
        steps: inout [Step], refusals: inout [Refusal]
    ) {
        if attribute.isOptional != previous.isOptional {
            if previous.isOptional {
                refusals.append(
                    Refusal(
                        entity: entity, attribute: attribute.name,
                        change: "optional attribute became required; stored records may hold nil"))
            } else {
                refusals.append(
                    Refusal(
                        entity: entity, attribute: attribute.name,
                        change: "required attribute became optional; the column's NOT NULL constraint cannot be relaxed automatically"))
            }
        }
        if let problem = typeChange(from: previous.type, to: attribute.type) {
            refusals.append(Refusal(entity: entity, attribute: attribute.name, change: problem))
        }
        if attribute.isUnique && !previous.isUnique {
            steps.append(.addUniqueIndex(entity: entity, attribute: attribute))
        } else if !attribute.isUnique && previous.isUnique {
            steps.append(.dropUniqueIndex(entity: entity, attribute: previous))
        } else if attribute.isUnique && attribute.name != previous.name {
            steps.append(.dropUniqueIndex(entity: entity, attribute: previous))
            steps.append(.addUniqueIndex(entity: entity, attribute: attribute))
        }
        if attribute.isIndexed && (!previous.isIndexed || attribute.name != previous.name) {
            if previous.isIndexed { steps.append(.dropIndex(entity: entity, attribute: previous)) }
            steps.append(.addIndex(entity: entity, attribute: attribute))
        } else if !attribute.isIndexed && previous.isIndexed {
            steps.append(.dropIndex(entity: entity, attribute: previous))
        }
    }

    /// Describes why a stored type cannot become the new type, or `nil` when it can.
    static func typeChange(from old: Schema.AttributeType, to new: Schema.AttributeType) -> String? {
        switch (old.storageIdentity, new.storageIdentity) {
        case (.enumeration(let a), .enumeration(let b)):
            if a.rawType != b.rawType {
                return "enum \(b.typeName) raw type changed from \(a.rawType.rawValue) to \(b.rawType.rawValue); stored raw values would not decode"
            }
            if let oldCases = a.cases, let newCases = b.cases {
                let removed = Set(oldCases.map(\.rawValue)).subtracting(newCases.map(\.rawValue))
                if !removed.isEmpty {
                    return "enum \(b.typeName) lost the raw values \(removed.sorted().joined(separator: ", ")); stored records may hold them"
                }
            }
            return nil
        case (.composite(let a), .composite(let b)):
            return a.fields == b.fields ? nil : "composite \(b.typeName) was reshaped (fields \(describe(a)) → \(describe(b))); its columns no longer match"
        default:
            return old.storageIdentity == new.storageIdentity ? nil : "type changed from \(old.summary) to \(new.summary)"
        }
    }

    private static func describe(_ composite: Schema.Composite) -> String {
        "[" + composite.fields.map { "\($0.name): \($0.type.summary)\($0.isOptional ? "?" : "")" }.joined(separator: ", ") + "]"
    }
}

extension Schema.AttributeType {
    /// A short human description: `string`, `enum Priority(int)`, `composite People`, `JSON [String]`.
    public var summary: String {
        switch self {
        case .scalar(let scalar): scalar.rawValue
        case .enumeration(let e): "enum \(e.typeName)(\(e.rawType.rawValue))"
        case .composite(let c): "composite \(c.typeName)"
        case .collection(let typeName, _): "collection \(typeName)"
        case .json(let typeName, _): "JSON \(typeName)"
        }
    }
}

extension Schema.Relationship {
    /// `to-many Article (inverse category)`.
    public var summary: String {
        "\(isToMany ? "to-many" : "to-one") \(destination)\(inverse.map { " (inverse \($0))" } ?? "")"
    }
}

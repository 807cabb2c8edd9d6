extension Schema.Attribute {
    /// The name the attribute syncs under: its `originalName` (the first name it had, kept
    /// through later renames), else its name. Clients of every version read and write it
    /// under their own name; the wire and the server's log use this one.
    ///
    /// ```swift
    /// Schema.Attribute(name: "heading", type: .scalar(.string), originalName: "title").identity   // "title"
    /// ```
    public var identity: String { originalName ?? name }

    /// The name `column` (one of ``columns``) syncs under: its name with the attribute's
    /// ``identity`` in place of the attribute's name (`people.age` of `people`, originalName
    /// `persons`, is `persons.age`).
    public func wireName(of column: Schema.Column) -> String {
        identity + column.name.dropFirst(name.count)
    }
}

extension Schema.Entity {
    /// The name the entity's records are stored and synced under: its `originalName` (the
    /// first name the model had, kept through later renames), else its name. Record URIs,
    /// the store's table, the journal, the wire and the server's log all use it, so a URI
    /// stays the same when the class is renamed.
    ///
    /// ```swift
    /// Schema.Entity(name: "Todo", attributes: [], originalName: "Task").identity   // "Task"
    /// ```
    public var identity: String { originalName ?? name }
}

extension Schema {
    /// The schema as a store keeps it: every entity under its ``Entity/identity`` (its table,
    /// its records' URIs, its journal entries) and every relationship pointing at its
    /// destination's identity. The same schema when no entity was renamed.
    ///
    /// ```swift
    /// let stored = schema.stored   // "Todo" (originalName "Task") is "Task"
    /// ```
    public var stored: Schema {
        guard entities.contains(where: { $0.originalName != nil }) else { return self }
        let identities = Dictionary(entities.map { ($0.name, $0.identity) }, uniquingKeysWith: { first, _ in first })
        var stored = self
        for e in stored.entities.indices {
            stored.entities[e].name = stored.entities[e].identity
            stored.entities[e].originalName = nil
            for r in stored.entities[e].relationships.indices {
                let destination = stored.entities[e].relationships[r].destination
                stored.entities[e].relationships[r].destination = identities[destination] ?? destination
            }
        }
        return stored
    }

    /// The name the entity `name` (a class name, or an entity's identity) is stored under:
    /// its ``Entity/identity``; `name` itself when no entity is declared so.
    ///
    /// ```swift
    /// declared.storedEntityName("Todo")   // "Task" for @Model(originalName: "Task") class Todo
    /// ```
    public func storedEntityName(_ name: String) -> String {
        entities.first(where: { $0.name == name })?.identity ?? name
    }

    /// The schema as the wire names it: the ``stored`` schema with every attribute under its
    /// ``Attribute/identity`` (what the server validates pushes and keeps unique values
    /// with). The same schema when nothing was renamed.
    ///
    /// ```swift
    /// let wire = schema.onTheWire   // "heading" (originalName "title") is "title"
    /// ```
    public var onTheWire: Schema {
        var wire = stored
        guard wire.entities.contains(where: { $0.attributes.contains { $0.originalName != nil && $0.originalName != $0.name } }) else { return wire }
        for e in wire.entities.indices {
            for a in wire.entities[e].attributes.indices {
                let identity = wire.entities[e].attributes[a].identity
                wire.entities[e].attributes[a].name = identity
                wire.entities[e].attributes[a].originalName = nil
            }
        }
        return wire
    }

    /// Why entity or attribute names and identities cannot be told apart, if they cannot:
    /// two entities or two attributes of an entity syncing under one name, or a name that is
    /// another's identity (a record or a value on the wire would have two meanings).
    ///
    /// ```swift
    /// if let problem = schema.identityProblem { throw MyError(problem) }
    /// ```
    public var identityProblem: String? {
        var entityIdentities: [String: String] = [:]
        for entity in entities {
            if let other = entityIdentities.updateValue(entity.name, forKey: entity.identity) {
                return "entities '\(other)' and '\(entity.name)' are both stored and synced as '\(entity.identity)' (originalName names an entity's first name, once)"
            }
        }
        for entity in entities where entity.identity != entity.name {
            if let other = entities.first(where: { $0.name == entity.identity }) {
                return "'\(entity.identity)' is the original name of entity '\(entity.name)' and the name of entity '\(other.name)'; give one of them another name"
            }
        }
        for entity in entities {
            var identities: [String: String] = [:]
            for attribute in entity.attributes {
                if let other = identities.updateValue(attribute.name, forKey: attribute.identity) {
                    return "\(entity.name): attributes '\(other)' and '\(attribute.name)' both sync as '\(attribute.identity)' (originalName names an attribute's first name, once)"
                }
            }
            for attribute in entity.attributes where attribute.identity != attribute.name {
                if let relationship = entity.relationships.first(where: { $0.name == attribute.identity }) {
                    return "\(entity.name): '\(attribute.identity)' is the original name of '\(attribute.name)' and the name of the relationship '\(relationship.name)'"
                }
                if let other = entity.attributes.first(where: { $0.name == attribute.identity }) {
                    return "\(entity.name): '\(attribute.identity)' is the original name of '\(attribute.name)' and the name of '\(other.name)'; give one of them another name"
                }
            }
        }
        return nil
    }
}

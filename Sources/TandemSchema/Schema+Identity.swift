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

extension Schema {
    /// The schema as the wire names it: every attribute under its ``Attribute/identity``
    /// (what the server validates pushes and keeps unique values with). The same schema
    /// when no attribute was renamed.
    ///
    /// ```swift
    /// let wire = schema.onTheWire   // "heading" (originalName "title") is "title"
    /// ```
    public var onTheWire: Schema {
        guard entities.contains(where: { $0.attributes.contains { $0.originalName != nil && $0.originalName != $0.name } }) else { return self }
        var wire = self
        for e in wire.entities.indices {
            for a in wire.entities[e].attributes.indices {
                let identity = wire.entities[e].attributes[a].identity
                wire.entities[e].attributes[a].name = identity
                wire.entities[e].attributes[a].originalName = nil
            }
        }
        return wire
    }

    /// Why attribute names and identities of an entity cannot be told apart, if they cannot:
    /// two attributes syncing under one name, or a name that is another attribute's
    /// identity (a value on the wire would have two meanings).
    public var identityProblem: String? {
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

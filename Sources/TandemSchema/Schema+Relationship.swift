extension Schema {
    /// A relationship between two entities: a to-one stored as a foreign-key column holding
    /// the target's UUID (the same on every replica), or a to-many stored through its to-one
    /// inverse or, for many-to-many and inverse-less to-many, a join table.
    ///
    /// ```swift
    /// Schema.Relationship(name: "category", destination: "Category", cardinality: .toOne, inverse: "articles")
    /// ```
    public struct Relationship: Sendable, Hashable, Codable {
        /// What deleting the source does to the related objects.
        public enum DeleteRule: String, Sendable, Hashable, Codable, CaseIterable {
            /// Clear the inverse (the default).
            case nullify
            /// Delete the related objects too, recursively.
            case cascade
            /// Refuse the delete while related objects exist.
            case deny
            /// Leave the related objects alone (the store still clears dangling references).
            case noAction
        }

        public enum Cardinality: String, Sendable, Hashable, Codable {
            case toOne, toMany
        }

        /// How a relationship is stored.
        public enum Storage: Sendable, Hashable {
            /// A column of the source table holding the destination's UUID.
            case foreignKey(column: String)
            /// The inverse to-one's foreign key (one-to-many).
            case inverseForeignKey
            /// A join table with `source` and `target` UUID columns: `ownerColumn` holds this
            /// side's UUID, `memberColumn` the related record's.
            case joinTable(name: String, ownerColumn: String, memberColumn: String)
        }

        public var name: String
        /// The destination entity's name.
        public var destination: String
        public var cardinality: Cardinality
        /// The name of the inverse relationship on the destination, if any.
        public var inverse: String?
        public var deleteRule: DeleteRule
        /// Whether a to-one may be nil (to-many relationships are never nil, only empty).
        public var isOptional: Bool
        public var originalName: String?

        public init(
            name: String, destination: String, cardinality: Cardinality, inverse: String? = nil,
            deleteRule: DeleteRule = .nullify, isOptional: Bool = true, originalName: String? = nil
        ) {
            self.name = name
            self.destination = destination
            self.cardinality = cardinality
            self.inverse = inverse
            self.deleteRule = deleteRule
            self.isOptional = isOptional
            self.originalName = originalName
        }

        public var isToMany: Bool { cardinality == .toMany }
    }
}

extension Schema.Entity {
    /// The relationship with this name, if any.
    public func relationship(named name: String) -> Schema.Relationship? {
        relationships.first { $0.name == name }
    }

    /// The foreign-key columns of this entity's to-one relationships, in declaration order.
    public var foreignKeyColumns: [Schema.Column] {
        relationships.filter { !$0.isToMany }.map {
            Schema.Column(name: $0.name, sqlType: .text, isNullable: true, path: [$0.name], role: .foreignKey)
        }
    }
}

extension Schema {
    /// How `relationship` of `entity` is stored, given the schema's other side.
    ///
    /// A join table is named after the side whose `Entity.relationship` sorts first
    /// (`Article.collections`), with columns `source` (that side's UUID) and `target`.
    public func storage(of relationship: Relationship, in entity: Entity) -> Relationship.Storage {
        if !relationship.isToMany { return .foreignKey(column: relationship.name) }
        if let inverseName = relationship.inverse,
            let inverse = self.entity(named: relationship.destination)?.relationship(named: inverseName),
            !inverse.isToMany
        {
            return .inverseForeignKey
        }
        let mine = "\(entity.name).\(relationship.name)"
        let theirs = relationship.inverse.map { "\(relationship.destination).\($0)" }
        if let theirs, theirs < mine {
            return .joinTable(name: theirs, ownerColumn: "target", memberColumn: "source")
        }
        return .joinTable(name: mine, ownerColumn: "source", memberColumn: "target")
    }
}

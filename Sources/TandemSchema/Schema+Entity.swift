extension Schema {
    /// One model type: a table in the store.
    ///
    /// ```swift
    /// let note = Schema.Entity(name: "Note", attributes: [Schema.Attribute(name: "title", type: .scalar(.string))])
    /// note.columns.map(\.name)    // ["#id", "title"]
    /// ```
    public struct Entity: Sendable, Hashable, Codable {
        /// The entity name: the model class's unqualified name.
        public var name: String
        /// The entity's first name, when the class was renamed (`@Model(originalName:)`):
        /// record URIs, the store's table and the wire keep it for good (see ``identity``).
        public var originalName: String?
        /// Persisted attributes in declaration order.
        public var attributes: [Attribute]
        /// Relationships in declaration order.
        public var relationships: [Relationship]

        public init(name: String, attributes: [Attribute], relationships: [Relationship] = [], originalName: String? = nil) {
            self.name = name
            self.originalName = originalName
            self.attributes = attributes
            self.relationships = relationships
        }

        private enum CodingKeys: String, CodingKey { case name, originalName, attributes, relationships }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try container.decode(String.self, forKey: .name)
            originalName = try container.decodeIfPresent(String.self, forKey: .originalName)
            attributes = try container.decode([Attribute].self, forKey: .attributes)
            relationships = try container.decodeIfPresent([Relationship].self, forKey: .relationships) ?? []
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(name, forKey: .name)
            try container.encodeIfPresent(originalName, forKey: .originalName)
            try container.encode(attributes, forKey: .attributes)
            if !relationships.isEmpty { try container.encode(relationships, forKey: .relationships) }
        }

        /// The attribute with this name, if any.
        public func attribute(named name: String) -> Attribute? {
            attributes.first { $0.name == name }
        }

        /// Every column of the entity's table: the primary key, the attributes' columns, then
        /// one foreign-key column per to-one relationship.
        public var columns: [Column] {
            [Column.primaryKey] + attributes.flatMap(\.columns) + foreignKeyColumns
        }
    }
}

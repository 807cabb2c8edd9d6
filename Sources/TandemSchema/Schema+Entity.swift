extension Schema {
    /// One model type: a table in the store.
    ///
    /// ```swift
    /// let note = Schema.Entity(name: "Note", attributes: [Schema.Attribute(name: "title", type: .scalar(.string))])
    /// note.columns.map(\.name)    // ["#id", "title"]
    /// ```
    public struct Entity: Sendable, Hashable, Codable {
        /// The entity name: the model class's unqualified name, also the table name.
        public var name: String
        /// Persisted attributes in declaration order.
        public var attributes: [Attribute]

        public init(name: String, attributes: [Attribute]) {
            self.name = name
            self.attributes = attributes
        }

        /// The attribute with this name, if any.
        public func attribute(named name: String) -> Attribute? {
            attributes.first { $0.name == name }
        }

        /// Every column of the entity's table, the primary key first.
        public var columns: [Column] {
            [Column.primaryKey] + attributes.flatMap(\.columns)
        }
    }
}

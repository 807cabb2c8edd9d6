extension Schema {
    /// One column of an entity's table.
    ///
    /// Naming scheme: the primary key is `#id` (a UUID as lowercase text; `#` cannot start a
    /// Swift identifier, so it never collides with an attribute); an attribute's column is its
    /// name; a composite leaf's column is its dotted path (`people.age`, `people.geo.lat`).
    /// Dots cannot appear in Swift identifiers, so these never collide either.
    public struct Column: Sendable, Hashable {
        /// What the column holds.
        public enum Role: Sendable, Hashable {
            /// The record's UUID.
            case primaryKey
            /// A value (scalar, enum raw value, JSON text or a composite leaf).
            case value
            /// `1` when an optional composite is present, `NULL` when it is `nil`.
            case presence
            /// A to-one relationship: the destination's UUID, or `NULL`.
            case foreignKey
        }

        public var name: String
        public var sqlType: SQLType
        public var isNullable: Bool
        /// The attribute name followed by the composite field names leading to this column.
        public var path: [String]
        public var role: Role

        public init(name: String, sqlType: SQLType, isNullable: Bool, path: [String], role: Role) {
            self.name = name
            self.sqlType = sqlType
            self.isNullable = isNullable
            self.path = path
            self.role = role
        }

        /// The primary-key column `#id`.
        public static let primaryKey = Column(name: "#id", sqlType: .text, isNullable: false, path: [], role: .primaryKey)
    }
}

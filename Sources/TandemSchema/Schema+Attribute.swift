extension Schema {
    /// A persisted property of an entity.
    ///
    /// ```swift
    /// Schema.Attribute(name: "code", type: .scalar(.string), options: [.unique])
    /// Schema.Attribute(name: "weight", type: .scalar(.double), isOptional: true)
    /// ```
    public struct Attribute: Sendable, Hashable, Codable {
        /// Storage options, spelled as in SwiftData: `@Attribute(.unique)`.
        public enum Option: String, Sendable, Hashable, Codable, CaseIterable {
            /// No two records may share this value; enforced by a unique index.
            case unique
            /// A deleted record's tombstone keeps this value (see the change journal).
            case preserveValueOnDeletion
            /// An index on the attribute's columns, for attributes you filter, sort or group by.
            case indexed
        }

        /// The property name.
        public var name: String
        /// The name this attribute had in an earlier model version (`@Attribute(originalName:)`).
        public var originalName: String?
        /// How the value is stored.
        public var type: AttributeType
        /// Whether the Swift type is `Optional` (a nullable column).
        public var isOptional: Bool
        /// Storage options.
        public var options: Set<Option>
        /// The source text of the property's initializer (`"[]"`, `".now"`), if it has one.
        public var defaultValue: String?

        public init(
            name: String, type: AttributeType, isOptional: Bool = false,
            options: Set<Option> = [], originalName: String? = nil, defaultValue: String? = nil
        ) {
            self.name = name
            self.type = type
            self.isOptional = isOptional
            self.options = options
            self.originalName = originalName
            self.defaultValue = defaultValue
        }

        /// `true` with ``Option/unique``.
        public var isUnique: Bool { options.contains(.unique) }

        /// `true` with ``Option/indexed`` (a unique attribute has its unique index instead).
        public var isIndexed: Bool { options.contains(.indexed) && !isUnique }

        /// The columns that hold this attribute, in order.
        ///
        /// A scalar, enum or JSON value is one column named after the attribute. A composite
        /// is one column per leaf, named by its dotted path (`people.age`), plus a leading
        /// presence column named after the attribute when the composite itself is optional.
        public var columns: [Column] {
            switch type {
            case .composite(let composite):
                let presence = isOptional ? [Column(name: name, sqlType: .integer, isNullable: true, path: [name], role: .presence)] : []
                return presence + composite.leafColumns(prefix: [name], nullable: isOptional)
            default:
                return [Column(name: name, sqlType: type.sqlType, isNullable: isOptional, path: [name], role: .value)]
            }
        }
    }
}

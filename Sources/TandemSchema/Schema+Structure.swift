extension Schema {
    /// What makes a well-formed schema unusable as a store's or a dataset's schema, if
    /// anything: repeated names, a column named like the primary key, a relationship named
    /// like an attribute, an entity named like the store's own tables (`tandem_…`), enum
    /// cases repeated or with raw values their raw type cannot hold, a first name
    /// (`originalName`) that two entities or two attributes sync under. The server refuses such a schema
    /// (422 `invalid_schema`), and so do the CLI's schema inputs.
    ///
    /// ```swift
    /// if let problem = schema.structuralProblem { print(problem) }
    /// ```
    public var structuralProblem: String? {
        var names: Set<String> = []
        for entity in entities {
            guard names.insert(entity.name).inserted else { return "entity '\(entity.name)' is declared twice" }
            guard !entity.name.isEmpty else { return "an entity has an empty name" }
            var columns: Set<String> = []
            for column in entity.columns {
                guard !column.name.isEmpty else { return "\(entity.name): a column has an empty name" }
                guard columns.insert(column.name).inserted else { return "\(entity.name): the column '\(column.name)' is declared twice (an attribute, a composite leaf or a relationship)" }
            }
            guard !entity.name.lowercased().hasPrefix("tandem_") else { return "entity '\(entity.name)': names starting with tandem_ are the store's own tables" }
            guard !entity.name.lowercased().hasPrefix("sqlite_") else { return "entity '\(entity.name)': names starting with sqlite_ are SQLite's own tables" }
            if let originalName = entity.originalName {
                // It names the records in URIs (tandem://dataset/Entity/uuid) and the table.
                guard Self.isPlainName(originalName) else {
                    return "entity '\(entity.name)': its originalName '\(originalName)' must be a plain name (letters, digits and _, not starting with a digit), as the model's first name was"
                }
                guard !originalName.lowercased().hasPrefix("tandem_"), !originalName.lowercased().hasPrefix("sqlite_") else {
                    return "entity '\(entity.name)': its originalName '\(originalName)' starts with tandem_ or sqlite_, the prefixes of the store's and SQLite's own tables"
                }
            }
            for attribute in entity.attributes {
                if let problem = Self.enumProblem(attribute.type, path: "\(entity.name).\(attribute.name)") { return problem }
                // The first name a column syncs under, as the property was once declared.
                if let originalName = attribute.originalName, !Self.isPlainName(originalName) {
                    return
                        "\(entity.name).\(attribute.name): its originalName '\(originalName)' must be a plain name (letters, digits and _, not starting with a digit), as the property's first name was"
                }
            }
            var members = Set(entity.attributes.map(\.name))
            for relationship in entity.relationships {
                guard !relationship.name.isEmpty else { return "\(entity.name): a relationship has an empty name" }
                guard members.insert(relationship.name).inserted else { return "\(entity.name): the name '\(relationship.name)' is used twice" }
            }
        }
        let entityNames = Set(entities.map(\.name))
        for entity in entities {
            for relationship in entity.relationships where !entityNames.contains(relationship.destination) {
                return "\(entity.name).\(relationship.name) points at '\(relationship.destination)', which is not an entity of the schema"
            }
        }
        // Renamed entities and attributes sync under their first name: it must name one only.
        return identityProblem
    }

    /// Whether `name` is a Swift-like plain name: letters, digits and `_`, not starting with
    /// a digit (what a class name is, and a record URI's entity can hold).
    static func isPlainName(_ name: String) -> Bool {
        guard let first = name.first, first.isLetter || first == "_" else { return false }
        return name.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }
    }

    /// Repeated enum cases, or raw values the raw type cannot hold, in `type`.
    private static func enumProblem(_ type: AttributeType, path: String) -> String? {
        switch type {
        case .enumeration(let enumeration):
            guard let cases = enumeration.cases else { return nil }
            var names: Set<String> = []
            var rawValues: Set<String> = []
            for item in cases {
                guard names.insert(item.name).inserted else { return "\(path): enum \(enumeration.typeName) has the case '\(item.name)' twice" }
                guard rawValues.insert(item.rawValue).inserted else { return "\(path): enum \(enumeration.typeName) has the raw value '\(item.rawValue)' twice" }
                let fits: Bool
                switch enumeration.rawType.sqlType {
                case .integer: fits = Int64(item.rawValue) != nil
                case .real: fits = Double(item.rawValue) != nil
                case .text, .blob: fits = true
                }
                guard fits else { return "\(path): the raw value '\(item.rawValue)' of case \(item.name) is not a \(enumeration.rawType.rawValue)" }
            }
            return nil
        case .composite(let composite):
            for field in composite.fields {
                if let problem = enumProblem(field.type, path: path + "." + field.name) { return problem }
            }
            return nil
        default:
            return nil
        }
    }
}

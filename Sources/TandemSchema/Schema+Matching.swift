extension Schema {
    /// This schema with what a running app cannot see taken from `other`: the cases of an
    /// enum that is not `CaseIterable` (`cases == nil`) and the declared shape of a JSON-stored
    /// type (`shape == nil`), wherever `other` has the same entity, attribute or composite
    /// field with a type of the same name and storage. Nothing else changes.
    ///
    /// `tandem schema extract` reads both from the Swift sources; the schema a store records
    /// at runtime has neither. The two are one schema version: see ``isVersion(of:)``.
    ///
    /// ```swift
    /// let runtime = try Schema([Todo.self])              // Priority is not CaseIterable: cases nil
    /// let published = try Schema(canonicalJSON: json)    // extracted from the sources: cases listed
    /// runtime.fillingUnknowns(from: published) == published   // true: the same version
    /// ```
    public func fillingUnknowns(from other: Schema) -> Schema {
        var filled = self
        for index in filled.entities.indices {
            guard let known = other.entity(named: filled.entities[index].name) else { continue }
            for attribute in filled.entities[index].attributes.indices {
                let name = filled.entities[index].attributes[attribute].name
                guard let knownAttribute = known.attribute(named: name) else { continue }
                filled.entities[index].attributes[attribute].type = Self.filling(filled.entities[index].attributes[attribute].type, from: knownAttribute.type)
            }
        }
        return filled
    }

    /// Whether this schema is `other` but for what a running app cannot see (enum cases of a
    /// type that is not `CaseIterable`, shapes of JSON-stored types): a store whose models
    /// give this schema syncs as version `other`, as the sync handshake and the server's
    /// registration decide.
    ///
    /// ```swift
    /// let version = history.last { runtime.isVersion(of: $0.schema) }
    /// ```
    public func isVersion(of other: Schema) -> Bool {
        self == other || fillingUnknowns(from: other) == other
    }

    private static func filling(_ type: AttributeType, from known: AttributeType) -> AttributeType {
        switch (type, known) {
        case (.enumeration(var enumeration), .enumeration(let other))
        where enumeration.cases == nil && enumeration.typeName == other.typeName && enumeration.rawType == other.rawType:
            enumeration.cases = other.cases
            return .enumeration(enumeration)
        case (.json(let name, nil), .json(let otherName, let shape)) where name == otherName:
            return .json(typeName: name, shape: shape)
        case (.collection(let name, let element), .collection(let otherName, let otherElement)) where name == otherName:
            guard let element, let otherElement else { return .collection(typeName: name, element: element ?? otherElement) }
            return .collection(typeName: name, element: filling(element, from: otherElement))
        case (.composite(var composite), .composite(let other)) where composite.typeName == other.typeName:
            for index in composite.fields.indices {
                guard let field = other.fields.first(where: { $0.name == composite.fields[index].name }) else { continue }
                composite.fields[index].type = filling(composite.fields[index].type, from: field.type)
            }
            return .composite(composite)
        default:
            return type
        }
    }
}

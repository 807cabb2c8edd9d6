public import Foundation

extension Schema: Codable {
    private enum CodingKeys: String, CodingKey {
        case formatVersion, entities
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let version = try container.decode(Int.self, forKey: .formatVersion)
        guard version == Schema.formatVersion else {
            throw SchemaError(
                .unsupportedFormatVersion,
                "schema JSON has formatVersion \(version); this build of Tandem reads formatVersion \(Schema.formatVersion). Upgrade Tandem to read it.")
        }
        entities = try container.decode([Entity].self, forKey: .entities)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Schema.formatVersion, forKey: .formatVersion)
        try container.encode(entities, forKey: .entities)
    }

    /// The canonical JSON form: sorted keys, two-space indentation, options sorted.
    ///
    /// Two exports of the same schema are byte-identical, so they diff cleanly.
    ///
    /// ```swift
    /// try schema.canonicalJSON().write(to: URL(filePath: "schema.json"))
    /// ```
    public func canonicalJSON() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }

    /// Reads a schema from its JSON form.
    ///
    /// - Throws: ``SchemaError`` with code ``SchemaError/Code/invalidJSON`` (with the JSON
    ///   path of the problem) or ``SchemaError/Code/unsupportedFormatVersion``.
    public init(canonicalJSON data: Data) throws {
        // A hand-written reader: several times faster than JSONDecoder on large schemas, with
        // the same rules and path-naming messages as the Codable conformance.
        let document: JSONValue
        do {
            document = try JSONValue.parse(data)
        } catch let error as JSONValue.SyntaxError {
            throw SchemaError(.invalidJSON, "invalid schema JSON: not JSON at \(error)")
        }
        self = try Schema(json: JSONReader(value: document), data: data)
    }
}

extension Schema.Attribute {
    private enum CodingKeys: String, CodingKey {
        case name, originalName, type, isOptional, options, defaultValue
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        originalName = try container.decodeIfPresent(String.self, forKey: .originalName)
        type = try container.decode(Schema.AttributeType.self, forKey: .type)
        isOptional = try container.decodeIfPresent(Bool.self, forKey: .isOptional) ?? false
        options = Set(try container.decodeIfPresent([Option].self, forKey: .options) ?? [])
        defaultValue = try container.decodeIfPresent(String.self, forKey: .defaultValue)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encodeIfPresent(originalName, forKey: .originalName)
        try container.encode(type, forKey: .type)
        try container.encode(isOptional, forKey: .isOptional)
        if !options.isEmpty {
            try container.encode(options.map(\.rawValue).sorted(), forKey: .options)
        }
        try container.encodeIfPresent(defaultValue, forKey: .defaultValue)
    }
}

extension Schema.AttributeType: Codable {
    private enum CodingKeys: String, CodingKey {
        case kind, scalar, composite, enumeration, typeName, shape, element
    }

    private enum Kind: String, Codable {
        case scalar, composite, enumeration, collection, json
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        switch try container.decode(Kind.self, forKey: .kind) {
        case .scalar: self = .scalar(try container.decode(Schema.ScalarType.self, forKey: .scalar))
        case .composite: self = .composite(try container.decode(Schema.Composite.self, forKey: .composite))
        case .enumeration: self = .enumeration(try container.decode(Schema.Enumeration.self, forKey: .enumeration))
        case .collection:
            self = .collection(
                typeName: try container.decode(String.self, forKey: .typeName),
                element: try container.decodeIfPresent(Schema.AttributeType.self, forKey: .element))
        case .json:
            self = .json(
                typeName: try container.decode(String.self, forKey: .typeName),
                shape: try container.decodeIfPresent(String.self, forKey: .shape))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .scalar(let scalar):
            try container.encode(Kind.scalar, forKey: .kind)
            try container.encode(scalar, forKey: .scalar)
        case .composite(let composite):
            try container.encode(Kind.composite, forKey: .kind)
            try container.encode(composite, forKey: .composite)
        case .enumeration(let enumeration):
            try container.encode(Kind.enumeration, forKey: .kind)
            try container.encode(enumeration, forKey: .enumeration)
        case .collection(let typeName, let element):
            try container.encode(Kind.collection, forKey: .kind)
            try container.encode(typeName, forKey: .typeName)
            try container.encodeIfPresent(element, forKey: .element)
        case .json(let typeName, let shape):
            try container.encode(Kind.json, forKey: .kind)
            try container.encode(typeName, forKey: .typeName)
            try container.encodeIfPresent(shape, forKey: .shape)
        }
    }
}

extension DecodingError {
    /// A one-line description with the coding path, e.g. `entities[0].attributes[2].type: missing key 'kind'`.
    ///
    /// ```swift
    /// catch let error as DecodingError { print(error.tandemDescription) }
    /// ```
    public var tandemDescription: String {
        func path(_ context: Context) -> String {
            let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return path.isEmpty ? "<root>" : String(path.drop { $0 == "." })
        }
        switch self {
        case .keyNotFound(let key, let context): return "\(path(context)): missing key '\(key.stringValue)'"
        case .typeMismatch(let type, let context): return "\(path(context)): expected \(type): \(context.debugDescription)"
        case .valueNotFound(let type, let context): return "\(path(context)): expected \(type), found null"
        case .dataCorrupted(let context): return "\(path(context)): \(context.debugDescription)"
        @unknown default: return "\(self)"
        }
    }
}

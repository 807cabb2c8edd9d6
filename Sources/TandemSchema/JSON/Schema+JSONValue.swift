import Foundation

/// A JSON value with typed accessors. Errors carry the path of the failing value
/// (`entities[0].attributes[2].type: missing key 'kind'`, as `DecodingError` does), built
/// only when something fails: each accessor adds its component while the error unwinds.
struct JSONReader {
    let value: JSONValue
    /// The byte offset of the value's member name (or of its enclosing member's).
    let offset: Int

    init(value: JSONValue, offset: Int = 0) {
        self.value = value
        if case .object(let members) = value, let first = members.first {
            self.offset = first.offset
        } else {
            self.offset = offset
        }
    }

    /// A failure, its path (innermost component first) and its byte offset.
    struct Failure: Error {
        var message: String
        var offset: Int
        var reversedPath: [String] = []

        var path: String {
            var text = ""
            for component in reversedPath.reversed() {
                text += component.hasPrefix("[") || text.isEmpty ? component : "." + component
            }
            return text.isEmpty ? "<root>" : text
        }
    }

    private func members() throws -> [JSONValue.Member] {
        guard case .object(let members) = value else { throw Failure(message: "expected an object, found \(value.kindDescription)", offset: offset) }
        return members
    }

    /// Reads the member `key` with `read`; missing or null is an error.
    func required<T>(_ key: String, _ read: (JSONReader) throws -> T) throws -> T {
        guard let member = try members().first(where: { $0.key == key }) else { throw Failure(message: "missing key '\(key)'", offset: offset) }
        do {
            if case .null = member.value { throw Failure(message: "expected a value, found null", offset: member.offset) }
            return try read(JSONReader(value: member.value, offset: member.offset))
        } catch var failure as Failure {
            failure.reversedPath.append(key)
            throw failure
        }
    }

    /// Reads the member `key` with `read`, or `nil` when it is missing or null.
    func optional<T>(_ key: String, _ read: (JSONReader) throws -> T) throws -> T? {
        guard let member = try members().first(where: { $0.key == key }) else { return nil }
        if case .null = member.value { return nil }
        do {
            return try read(JSONReader(value: member.value, offset: member.offset))
        } catch var failure as Failure {
            failure.reversedPath.append(key)
            throw failure
        }
    }

    /// Reads every element of an array with `read`.
    func array<T>(_ read: (JSONReader) throws -> T) throws -> [T] {
        guard case .array(let elements) = value else { throw Failure(message: "expected an array, found \(value.kindDescription)", offset: offset) }
        var result: [T] = []
        result.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            do {
                result.append(try read(JSONReader(value: element, offset: offset)))
            } catch var failure as Failure {
                failure.reversedPath.append("[\(index)]")
                throw failure
            }
        }
        return result
    }

    func string() throws -> String {
        guard case .string(let text) = value else { throw Failure(message: "expected a string, found \(value.kindDescription)", offset: offset) }
        return text
    }

    func bool() throws -> Bool {
        guard case .bool(let flag) = value else { throw Failure(message: "expected a boolean, found \(value.kindDescription)", offset: offset) }
        return flag
    }

    func int() throws -> Int {
        guard case .number(let number) = value, let integer = Int(exactly: number) else {
            throw Failure(message: "expected an integer, found \(value.kindDescription)", offset: offset)
        }
        return integer
    }

    func raw<T: RawRepresentable>(_ type: T.Type) throws -> T where T.RawValue == String {
        let text = try string()
        guard let value = T(rawValue: text) else { throw Failure(message: "unknown value '\(text)'", offset: offset) }
        return value
    }
}

extension Schema {
    /// Reads a schema from a parsed JSON document, with the same rules and messages as its
    /// `Codable` conformance, plus the line of the problem in `data`.
    init(json root: JSONReader, data: Data) throws {
        do {
            let version = try root.required("formatVersion") { try $0.int() }
            guard version == Schema.formatVersion else {
                throw SchemaError(
                    .unsupportedFormatVersion,
                    "schema JSON has formatVersion \(version); this build of Tandem reads formatVersion \(Schema.formatVersion). Upgrade Tandem to read it.")
            }
            self.init(entities: try root.required("entities") { try $0.array(Schema.Entity.init(json:)) })
        } catch let failure as JSONReader.Failure {
            let (line, _) = JSONValue.position(of: failure.offset, in: data)
            throw SchemaError(.invalidJSON, "invalid schema JSON at line \(line): \(failure.path): \(failure.message)")
        }
    }
}

extension Schema.Entity {
    init(json: JSONReader) throws {
        self.init(
            name: try json.required("name") { try $0.string() },
            attributes: try json.required("attributes") { try $0.array(Schema.Attribute.init(json:)) },
            relationships: try json.optional("relationships") { try $0.array(Schema.Relationship.init(json:)) } ?? [],
            originalName: try json.optional("originalName") { try $0.string() })
    }
}

extension Schema.Attribute {
    init(json: JSONReader) throws {
        self.init(
            name: try json.required("name") { try $0.string() },
            type: try json.required("type", Schema.AttributeType.init(json:)),
            isOptional: try json.optional("isOptional") { try $0.bool() } ?? false,
            options: Set(try json.optional("options") { try $0.array { try $0.raw(Option.self) } } ?? []),
            originalName: try json.optional("originalName") { try $0.string() },
            defaultValue: try json.optional("defaultValue") { try $0.string() })
    }
}

extension Schema.AttributeType {
    private enum Kind: String {
        case scalar, composite, enumeration, collection, json
    }

    init(json: JSONReader) throws {
        switch try json.required("kind", { try $0.raw(Kind.self) }) {
        case .scalar:
            self = .scalar(try json.required("scalar") { try $0.raw(Schema.ScalarType.self) })
        case .composite:
            self = .composite(
                try json.required("composite") { composite in
                    Schema.Composite(
                        typeName: try composite.required("typeName") { try $0.string() },
                        fields: try composite.required("fields") { try $0.array(Schema.Field.init(json:)) })
                })
        case .enumeration:
            self = .enumeration(
                try json.required("enumeration") { enumeration in
                    let cases = try enumeration.optional("cases") {
                        try $0.array { item in
                            Schema.Enumeration.Case(
                                name: try item.required("name") { try $0.string() },
                                rawValue: try item.required("rawValue") { try $0.string() })
                        }
                    }
                    return Schema.Enumeration(
                        typeName: try enumeration.required("typeName") { try $0.string() },
                        rawType: try enumeration.required("rawType") { try $0.raw(Schema.ScalarType.self) },
                        cases: cases)
                })
        case .collection:
            self = .collection(
                typeName: try json.required("typeName") { try $0.string() },
                element: try json.optional("element", Schema.AttributeType.init(json:)))
        case .json:
            self = .json(typeName: try json.required("typeName") { try $0.string() }, shape: try json.optional("shape") { try $0.string() })
        }
    }
}

extension Schema.Field {
    init(json: JSONReader) throws {
        self.init(
            name: try json.required("name") { try $0.string() },
            type: try json.required("type", Schema.AttributeType.init(json:)),
            isOptional: try json.required("isOptional") { try $0.bool() })
    }
}

extension Schema.Relationship {
    init(json: JSONReader) throws {
        self.init(
            name: try json.required("name") { try $0.string() },
            destination: try json.required("destination") { try $0.string() },
            cardinality: try json.required("cardinality") { try $0.raw(Cardinality.self) },
            inverse: try json.optional("inverse") { try $0.string() },
            deleteRule: try json.required("deleteRule") { try $0.raw(DeleteRule.self) },
            isOptional: try json.required("isOptional") { try $0.bool() },
            originalName: try json.optional("originalName") { try $0.string() })
    }
}

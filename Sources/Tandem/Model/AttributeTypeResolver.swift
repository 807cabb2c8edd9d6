/// Decides how a Swift type is stored, following DESIGN.md's storage mapping.
///
/// Order: `Optional` (unwrapped, nullable), scalars (``ColumnValue``), enums with a scalar raw
/// value, collections (JSON), then other Codable types, probed with ``ShapeProbe``: a struct
/// whose `init(from:)` reads a keyed container field by field is a composite; anything else
/// (an enum with payloads, a single-value wrapper) is stored as JSON.
enum AttributeTypeResolver {
    /// How many collections deep element shapes are recorded (a type can contain itself
    /// through a collection, `struct Node { var children: [Node] }`, so there must be a bound).
    /// `tandem schema extract` applies the same bound.
    static let elementDepth = 2

    /// - Parameter collections: how many collections enclose `type` (element shapes stop at ``elementDepth``).
    static func resolve(_ type: Any.Type, path: String, collections: Int = 0) throws -> ResolvedType {
        if let optional = type as? any OptionalMarker.Type {
            let wrapped = optional.wrappedType
            if wrapped is any OptionalMarker.Type {
                throw StoreError(.invalidModel, "\(path) has a nested optional type \(typeName(type)), which cannot be stored (a column has only one NULL)")
            }
            var resolved = try resolve(wrapped, path: path, collections: collections)
            resolved.isOptional = true
            resolved.sample = optional.none
            return resolved
        }
        if let scalar = type as? any ColumnValue.Type {
            return ResolvedType(type: .scalar(scalar.scalarType), isOptional: false, sample: scalar.placeholder)
        }
        if let raw = type as? any (RawRepresentable & Codable).Type {
            return try enumeration(raw, path: path)
        }
        if let collection = type as? any JSONCollection.Type {
            // The element's shape is for the compatibility checker; one the probe cannot
            // discover is left out (storage depends on the collection's type name alone).
            let element =
                collections < elementDepth
                ? try? resolve(collection.elementType, path: "\(path)[]", collections: collections + 1).type
                : nil
            return ResolvedType(type: .collection(typeName: typeName(type), element: element), isOptional: false, sample: collection.emptyValue)
        }
        if let codable = type as? any Codable.Type {
            return try probe(codable, path: path, collections: collections)
        }
        throw StoreError(
            .invalidModel,
            "\(path) has type \(typeName(type)), which Tandem cannot store: use a scalar, an enum with a raw value, a Codable struct or collection, or mark the property @Transient")
    }

    static func typeName(_ type: Any.Type) -> String {
        String(describing: type)
    }

    private static func enumeration<E: RawRepresentable & Codable>(_ type: E.Type, path: String) throws -> ResolvedType {
        guard let rawType = E.RawValue.self as? any ColumnValue.Type else {
            throw StoreError(.invalidModel, "\(path): enum \(typeName(E.self)) has raw type \(typeName(E.RawValue.self)), which is not a storable scalar")
        }
        var cases: [Schema.Enumeration.Case]?
        var sample: E?
        if let iterable = E.self as? any CaseIterable.Type {
            let all = allCases(iterable).compactMap { $0 as? E }
            // A case's name is what it prints; an enum with its own description prints that
            // instead, so its raw values name its cases (`tandem schema extract` does the same).
            cases = all.map { value in
                let raw = String(describing: value.rawValue)
                return Schema.Enumeration.Case(name: value is any CustomStringConvertible ? raw : String(describing: value), rawValue: raw)
            }
            sample = all.first
        }
        if sample == nil, let placeholder = rawType.placeholder as? E.RawValue {
            sample = E(rawValue: placeholder)
        }
        return ResolvedType(
            type: .enumeration(Schema.Enumeration(typeName: typeName(E.self), rawType: rawType.scalarType, cases: cases)),
            isOptional: false, sample: sample)
    }

    private static func allCases<C: CaseIterable>(_ type: C.Type) -> [Any] {
        C.allCases.map { $0 as Any }
    }

    private static func probe<T: Codable>(_ type: T.Type, path: String, collections: Int) throws -> ResolvedType {
        let probe = ShapeProbe(path: path, collections: collections)
        let name = typeName(T.self)
        do {
            let value = try T(from: probe)
            if probe.isKeyedStruct {
                return ResolvedType(type: .composite(Schema.Composite(typeName: name, fields: probe.fields)), isOptional: false, sample: value)
            }
            return ResolvedType(type: .json(typeName: name), isOptional: false, sample: value)
        } catch let error as StoreError {
            throw error
        } catch {
            if probe.isKeyedStruct {
                throw StoreError(
                    .invalidModel,
                    "\(path): could not discover the fields of \(name): its init(from:) threw \(error) when given placeholder values. Give it a synthesized Codable init, or store it another way (a raw property plus a computed one)"
                )
            }
            // Enums with payloads, single-value wrappers, unkeyed encodings: one JSON column.
            return ResolvedType(type: .json(typeName: name), isOptional: false, sample: nil)
        }
    }
}

/// `Optional`, seen through an existential.
protocol OptionalMarker {
    static var wrappedType: Any.Type { get }
    /// `nil` of this optional type (named so as not to shadow `Optional.none`).
    static var none: Any { get }
}

extension Optional: OptionalMarker {
    static var wrappedType: Any.Type { Wrapped.self }
    static var none: Any {
        let nothing: Wrapped? = nil
        return nothing as Any
    }
}

/// Collections stored as one JSON column.
protocol JSONCollection {
    static var emptyValue: Any { get }
    /// The element type (a dictionary's value type).
    static var elementType: Any.Type { get }
}

extension Array: JSONCollection where Element: Codable {
    static var emptyValue: Any { [Element]() }
    static var elementType: Any.Type { Element.self }
}

extension Set: JSONCollection where Element: Codable {
    static var emptyValue: Any { Set<Element>() }
    static var elementType: Any.Type { Element.self }
}

extension Dictionary: JSONCollection where Key: Codable, Value: Codable {
    static var emptyValue: Any { [Key: Value]() }
    static var elementType: Any.Type { Value.self }
}

/// Describes one persisted property of a model type: what `@Model` generates for each stored
/// `var`, and what a hand-written ``PersistentModel`` conformance lists in
/// ``PersistentModel/schemaMetadata``.
///
/// ```swift
/// static var schemaMetadata: [PropertyMetadata] {
///     [
///         PropertyMetadata(\Todo.code, name: "code", options: [.unique]),
///         PropertyMetadata(\Todo.tags, name: "tags", defaultValue: "[]", makeDefault: { [] }),
///     ]
/// }
/// ```
public struct PropertyMetadata: Sendable {
    /// The property name; also its column name.
    public let name: String
    /// The model's key path to the property, used to compile predicates and sorts.
    ///
    /// `nonisolated(unsafe)`: key paths are immutable once formed, so sharing one across
    /// threads is safe even though `AnyKeyPath` is not declared `Sendable` on every platform.
    public nonisolated(unsafe) let keyPath: AnyKeyPath
    /// The declared Swift type of the property.
    public let valueType: any Any.Type
    public let options: Set<Schema.Attribute.Option>
    public let originalName: String?
    /// The source text of the property's initializer, part of the schema.
    public let defaultValue: String?
    /// Evaluates the property's initializer (used to fill the column when migrating).
    let makeDefault: (@Sendable () -> Any)?
    /// How the value is stored; resolved once per type.
    let resolution: Result<ResolvedType, StoreError>
    /// For a property whose type is a model, an optional model or an array of models.
    let relationship: RelationshipTarget?
    /// `@Relationship(deleteRule:)`.
    public let deleteRule: Schema.Relationship.DeleteRule
    /// `@Relationship(inverse:)`.
    public nonisolated(unsafe) let inverse: AnyKeyPath?  // key paths are immutable

    /// Describes a persisted property.
    ///
    /// - Parameters:
    ///   - keyPath: the model's key path to the property.
    ///   - name: the property name.
    ///   - options: storage options (`.unique`, `.preserveValueOnDeletion`).
    ///   - originalName: the property's name in an earlier version of the model.
    ///   - defaultValue: the initializer's source text, recorded in the schema.
    ///   - makeDefault: evaluates the initializer; used to fill existing rows when the
    ///     attribute is added by a migration.
    public init<Root, Value>(
        _ keyPath: KeyPath<Root, Value>, name: String,
        options: [Schema.Attribute.Option] = [], originalName: String? = nil,
        deleteRule: Schema.Relationship.DeleteRule = .nullify, inverse: AnyKeyPath? = nil,
        defaultValue: String? = nil, makeDefault: (@Sendable () -> Value)? = nil
    ) {
        self.deleteRule = deleteRule
        self.inverse = inverse
        self.relationship = RelationshipTarget(Value.self)
        self.name = name
        self.keyPath = keyPath
        self.valueType = Value.self
        self.options = Set(options)
        self.originalName = originalName
        self.defaultValue = defaultValue
        if let makeDefault {
            self.makeDefault = { @Sendable () -> Any in makeDefault() }
        } else {
            self.makeDefault = nil
        }
        do {
            if relationship != nil {
                // Relationships have no attribute type; this placeholder is never stored.
                self.resolution = .success(ResolvedType(type: .scalar(.uuid), isOptional: true, sample: nil))
                return
            }
            self.resolution = .success(try AttributeTypeResolver.resolve(Value.self, path: "\(Root.self).\(name)"))
        } catch let error as StoreError {
            self.resolution = .failure(error)
        } catch {
            self.resolution = .failure(StoreError(.invalidModel, "\(error)", entity: "\(Root.self)", attribute: name))
        }
    }
}

/// The storage shape of a Swift type, with a sample value used while probing composites.
struct ResolvedType: @unchecked Sendable {
    // @unchecked: `sample` is only read while the shape is being discovered, on the thread
    // that discovered it; the shared parts (`type`, `isOptional`) are immutable values.
    var type: Schema.AttributeType
    var isOptional: Bool
    var sample: Any?
}

/// The destination of a relationship property, read from its Swift type.
struct RelationshipTarget: Sendable {
    let destination: any PersistentModel.Type
    let isToMany: Bool
    let isOptional: Bool

    init?(_ type: Any.Type) {
        if let model = type as? any PersistentModel.Type {
            self.destination = model; isToMany = false; isOptional = false
        } else if let optional = type as? any OptionalMarker.Type, let model = optional.wrappedType as? any PersistentModel.Type {
            self.destination = model; isToMany = false; isOptional = true
        } else if let array = type as? any ModelArray.Type {
            self.destination = array.modelType; isToMany = true; isOptional = false
        } else {
            return nil
        }
    }
}

/// `[Model]`, seen through an existential.
protocol ModelArray {
    static var modelType: any PersistentModel.Type { get }
}

extension Array: ModelArray where Element: PersistentModel {
    static var modelType: any PersistentModel.Type { Element.self }
}

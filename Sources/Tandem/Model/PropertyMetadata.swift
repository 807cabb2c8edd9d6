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
    public init<Root, Value>(_ keyPath: KeyPath<Root, Value>, name: String,
                             options: [Schema.Attribute.Option] = [], originalName: String? = nil,
                             defaultValue: String? = nil, makeDefault: (@Sendable () -> Value)? = nil) {
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

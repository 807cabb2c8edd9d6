/// An error thrown by the store, with an extensible code and the entity/attribute involved.
///
/// ```swift
/// do { try context.save() }
/// catch let error as StoreError where error.code == .uniqueViolation {
///     print(error.entity, error.attribute, error.message)   // Todo code …
/// }
/// ```
public struct StoreError: Error, Sendable, CustomStringConvertible {
    /// An extensible error code, like GRDB's extended result codes.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// A `.unique` attribute already has this value in another record.
        public static let uniqueViolation = Code(rawValue: "uniqueViolation")
        /// Another SQLite constraint failed (NOT NULL from raw SQL, CHECK…).
        public static let constraintViolation = Code(rawValue: "constraintViolation")
        /// The file's schema cannot be migrated to the models' schema.
        public static let schemaMismatch = Code(rawValue: "schemaMismatch")
        /// A model type cannot be stored (unsupported property type, reserved name…).
        public static let invalidModel = Code(rawValue: "invalidModel")
        /// A `#Predicate` or sort uses something that cannot be compiled to SQL.
        public static let unsupportedPredicate = Code(rawValue: "unsupportedPredicate")
        /// The file is not a SQLite database, is damaged, or is not a Tandem store.
        public static let corruptFile = Code(rawValue: "corruptFile")
        /// A SQLite database that is not a Tandem store.
        public static let foreignFile = Code(rawValue: "foreignFile")
        /// The database is locked by another connection for longer than the busy timeout.
        public static let busy = Code(rawValue: "busy")
        /// A URI or identifier is malformed.
        public static let invalidIdentifier = Code(rawValue: "invalidIdentifier")
        /// A stored value cannot be decoded into the property's type, or a value cannot be stored.
        public static let invalidValue = Code(rawValue: "invalidValue")
        /// The model was used with a context or container it does not belong to.
        public static let misuse = Code(rawValue: "misuse")
        /// Any other SQLite error; see ``StoreError/underlying``.
        public static let sqlite = Code(rawValue: "sqlite")
    }

    public var code: Code
    /// What happened and what to do about it.
    public var message: String
    /// The entity concerned, when there is one.
    public var entity: String?
    /// The attribute concerned, when there is one.
    public var attribute: String?
    /// The underlying error (a GRDB `DatabaseError`, a `SchemaError`, a `DecodingError`…).
    public var underlying: (any Error)?

    public init(_ code: Code, _ message: String, entity: String? = nil, attribute: String? = nil, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.entity = entity
        self.attribute = attribute
        self.underlying = underlying
    }

    public var description: String {
        var place = entity ?? ""
        if let attribute { place += place.isEmpty ? attribute : ".\(attribute)" }
        return "StoreError(\(code))\(place.isEmpty ? "" : " [\(place)]"): \(message)"
    }
}

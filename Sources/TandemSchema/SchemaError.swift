/// An error about a schema: unreadable JSON, or a change the store cannot apply.
///
/// ```swift
/// do { _ = try Schema(canonicalJSON: data) }
/// catch let error as SchemaError where error.code == .invalidJSON { print(error.message) }
/// ```
public struct SchemaError: Error, Sendable, Hashable, CustomStringConvertible {
    /// An extensible error code.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The JSON is malformed or lacks required fields.
        public static let invalidJSON = Code(rawValue: "invalidJSON")
        /// The JSON was written by a newer format version.
        public static let unsupportedFormatVersion = Code(rawValue: "unsupportedFormatVersion")
        /// A stored schema cannot be migrated to the current one automatically.
        public static let incompatibleChange = Code(rawValue: "incompatibleChange")
        /// An ignore file (`.tandem-schema.json`) or `// tandem:allow` comment is malformed.
        public static let invalidConfiguration = Code(rawValue: "invalidConfiguration")
        /// Swift sources cannot be turned into a schema (a syntax error, an unknown type).
        public static let invalidSource = Code(rawValue: "invalidSource")
        /// The models themselves are invalid (duplicate names, reserved names…).
        public static let invalidModel = Code(rawValue: "invalidModel")
    }

    public var code: Code
    public var message: String
    /// For ``Code/incompatibleChange``: every change that blocks the migration.
    public var changes: [MigrationPlan.Refusal]

    public init(_ code: Code, _ message: String, changes: [MigrationPlan.Refusal] = []) {
        self.code = code
        self.message = message
        self.changes = changes
    }

    /// Where the problem is, when it is in a file.
    public var location: SourceLocation?

    public var description: String { "SchemaError(\(code)): \(message)" }
}

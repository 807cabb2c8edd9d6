public import TandemSchema

extension WireValue {
    /// Whether the value may be stored in `column`: the rule the server applies to every
    /// pushed value, and the CLI to values it writes (a refused value would block pushes).
    ///
    /// ```swift
    /// WireValue.text("high").fits(rankColumn)   // false: rank is an INTEGER column
    /// ```
    public func fits(_ column: Schema.Column) -> Bool {
        switch (self, column.sqlType) {
        case (.null, _): column.isNullable
        case (.integer, .integer), (.bool, .integer), (.integer, .real), (.real, .real), (.text, .text), (.bytes, .blob): true
        default: false
        }
    }

    /// "a string", "an integer", … for messages.
    public var kindDescription: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .integer: "an integer"
        case .real: "a real number"
        case .text: "a string"
        case .bytes: "bytes"
        }
    }
}

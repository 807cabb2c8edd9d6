extension Schema {
    /// A constant a default value's Swift source text spells (`0`, `-2.5`, `true`, `"text"`,
    /// `[]`, `[:]`, `nil`), as a column stores it: what a store can give a column without the
    /// app's model types (a migration that adds it, a record an older app version made
    /// without it).
    ///
    /// ```swift
    /// Schema.Literal(defaultValue: "true", for: column)   // .integer(1)
    /// ```
    public enum Literal: Sendable, Hashable {
        case null
        case integer(Int64)
        case real(Double)
        case text(String)

        /// `nil` when `text` is not a literal the column can hold (`.now`, `Priority.high`, a
        /// string with escapes or interpolation, `nil` for a column that is not nullable).
        public init?(defaultValue text: String, for column: Column) {
            let text = text.trimmingCharacters(in: .whitespaces)
            if text == "nil" {
                guard column.isNullable else { return nil }
                self = .null
                return
            }
            switch column.sqlType {
            case .integer:
                if text == "true" {
                    self = .integer(1)
                } else if text == "false" {
                    self = .integer(0)
                } else {
                    guard let value = Int64(text.replacingOccurrences(of: "_", with: "")) else { return nil }
                    self = .integer(value)
                }
            case .real:
                guard let value = Double(text.replacingOccurrences(of: "_", with: "")) else { return nil }
                self = .real(value)
            case .text:
                if text == "[]" {
                    self = .text("[]")
                } else if text == "[:]" {
                    self = .text("{}")
                } else {
                    guard text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\""), !text.contains("\\(") else { return nil }
                    let inner = String(text.dropFirst().dropLast())
                    guard !inner.contains("\\") else { return nil }  // escapes: left to the app's models
                    self = .text(inner)
                }
            case .blob:
                return nil
            }
        }
    }
}

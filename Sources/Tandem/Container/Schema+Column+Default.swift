public import GRDB
public import TandemSchema

extension Schema.Column {
    /// The value of an attribute's default (`defaultValue`, the initializer's source text)
    /// in this column, when it is a literal the store can evaluate without the app's models
    /// (`0`, `"text"`, `true`, `[]`, `nil`); `nil` otherwise.
    ///
    /// ```swift
    /// rankColumn.defaultLiteral("0")          // 0
    /// titleColumn.defaultLiteral("\"New\"")   // "New"
    /// ```
    public func defaultLiteral(_ text: String) -> DatabaseValue? {
        Migrator.literal(text, for: self)
    }
}

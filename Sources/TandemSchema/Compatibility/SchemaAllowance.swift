/// A reviewed exception: findings of `rule` at `path` (or below it) are ignored, with a reason.
///
/// Allowances come from an ignore file (``CompatibilityIgnores``) or from a source comment on
/// the declaration, `// tandem:allow ENUM_CASE_ADDED old clients map unknown values to .normal`.
///
/// ```swift
/// let allowance = SchemaAllowance(rule: "ENUM_CASE_ADDED", path: "Todo.priority", reason: "handled")
/// allowance.covers(finding)
/// ```
public struct SchemaAllowance: Sendable, Hashable, Codable {
    /// A rule ID, or `*` for every rule.
    public var rule: String
    /// A model path; it also covers the paths below it (`Todo` covers `Todo.title`). `*` covers every path.
    public var path: String
    /// Why the change is acceptable; required.
    public var reason: String
    /// Where the allowance is written.
    public var location: SourceLocation?

    public init(rule: String, path: String, reason: String, location: SourceLocation? = nil) {
        self.rule = rule
        self.path = path
        self.reason = reason
        self.location = location
    }

    /// Whether this allowance ignores `finding`.
    public func covers(_ finding: SchemaFinding) -> Bool {
        (rule == "*" || rule == finding.rule)
            && (path == "*" || finding.path == path || finding.path.hasPrefix(path + "."))
    }
}

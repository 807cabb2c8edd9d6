/// One change between two schemas, judged by a ``CompatibilityRule``.
///
/// ```swift
/// for finding in Schema.compare(baseline: released, candidate: next) where finding.verdict == .breaking {
///     print("\(finding.rule) \(finding.path): \(finding.message) — \(finding.hint)")
/// }
/// ```
public struct SchemaFinding: Sendable, Hashable, Codable {
    /// The rule ID, e.g. `ATTRIBUTE_REMOVED`.
    public var rule: String
    /// The model path of the change: `Todo`, `Todo.title`, `Todo.people.age`, `Todo.priority.high`.
    public var path: String
    public var verdict: Verdict
    /// What changed, naming both versions.
    public var message: String
    /// How to make the change compatible.
    public var hint: String
    /// The candidate's declaration, when the candidate was read from Swift sources.
    public var location: SourceLocation?
    /// The baselines the finding was found against (file names), for a transitive check.
    public var baselines: [String]
    /// Why the finding is ignored (an ignore file entry or a `// tandem:allow` comment), if it is.
    public var ignoredBecause: String?

    public init(
        rule: String, path: String, verdict: Verdict, message: String, hint: String,
        location: SourceLocation? = nil, baselines: [String] = [], ignoredBecause: String? = nil
    ) {
        self.rule = rule
        self.path = path
        self.verdict = verdict
        self.message = message
        self.hint = hint
        self.location = location
        self.baselines = baselines
        self.ignoredBecause = ignoredBecause
    }

    /// A finding of `rule` with the rule's hint, unless `hint` is given.
    init(_ rule: CompatibilityRule, _ path: String, _ message: String, verdict: Verdict? = nil, hint: String? = nil) {
        self.init(rule: rule.id, path: path, verdict: verdict ?? rule.verdict, message: message, hint: hint ?? rule.hint)
    }

    /// Whether the finding counts: not ignored.
    public var isActive: Bool { ignoredBecause == nil }
}

/// One rule of the schema-compatibility checker: a kind of model change and its verdict for sync.
///
/// Rules have stable IDs (`ATTRIBUTE_REMOVED`) that findings, ignore files and
/// `// tandem:allow` comments refer to. ``all`` lists every rule; `tandem schema rules` prints it.
///
/// ```swift
/// let rule = CompatibilityRule.named("ENUM_CASE_ADDED")!
/// print(rule.verdict, rule.rationale)    // warning: old clients meet a raw value they cannot decode…
/// ```
public struct CompatibilityRule: Sendable, Hashable, Codable, Identifiable {
    /// What part of a schema a rule is about.
    public enum Category: String, Sendable, Hashable, Codable, CaseIterable {
        case entity, attribute, composite, enumeration, collection, relationship
    }

    /// The stable rule ID, e.g. `ATTRIBUTE_TYPE_CHANGED`.
    public var id: String
    public var category: Category
    /// The change the rule detects.
    public var change: String
    /// The verdict of a finding; ``verdictNote`` says when a finding is milder or harsher.
    public var verdict: Verdict
    /// When the verdict differs from ``verdict``, e.g. "warning if the old attribute had a default".
    public var verdictNote: String?
    /// Why the change has this verdict for sync.
    public var rationale: String
    /// What to do instead.
    public var hint: String

    public init(
        id: String, category: Category, change: String, verdict: Verdict, verdictNote: String? = nil,
        rationale: String, hint: String
    ) {
        self.id = id
        self.category = category
        self.change = change
        self.verdict = verdict
        self.verdictNote = verdictNote
        self.rationale = rationale
        self.hint = hint
    }

    /// The rule with this ID, if any.
    public static func named(_ id: String) -> CompatibilityRule? {
        byID[id]
    }

    private static let byID: [String: CompatibilityRule] = Dictionary(uniqueKeysWithValues: all.map { ($0.id, $0) })
}

/// A release check: a candidate schema against every released baseline (FULL, transitive),
/// with reviewed exceptions applied and source locations attached.
///
/// The sync server runs the same check when a client registers a schema version.
///
/// ```swift
/// let check = CompatibilityCheck(ignores: ignores)
/// let report = check.run(baselines: [.init(name: "v1.json", schema: v1), .init(name: "v2.json", schema: v2)],
///                        candidate: next)
/// if !report.isCompatible { for finding in report.breaking { print(finding.rule, finding.path) } }
/// ```
public struct CompatibilityCheck: Sendable {
    /// A released schema and the name it is reported under (its file name).
    public struct Baseline: Sendable {
        public var name: String
        public var schema: Schema
        public init(name: String, schema: Schema) {
            self.name = name
            self.schema = schema
        }
    }

    /// Exceptions from an ignore file and from `// tandem:allow` comments.
    public var allowances: [SchemaAllowance]
    /// Declarations of the candidate by model path (from ``Schema`` extraction), for file:line.
    public var locations: [String: SourceLocation]

    public init(allowances: [SchemaAllowance] = [], locations: [String: SourceLocation] = [:]) {
        self.allowances = allowances
        self.locations = locations
    }

    /// Compares `candidate` with every baseline; a finding met against several baselines is
    /// reported once, listing them.
    public func run(baselines: [Baseline], candidate: Schema) -> CompatibilityReport {
        var findings: [SchemaFinding] = []
        var index: [String: Int] = [:]
        for baseline in baselines {
            for var finding in Schema.compare(baseline: baseline.schema, candidate: candidate) {
                let key = "\(finding.rule)|\(finding.path)|\(finding.message)"
                if let existing = index[key] {
                    findings[existing].baselines.append(baseline.name)
                    continue
                }
                finding.baselines = [baseline.name]
                finding.location = location(of: finding.path)
                if let allowance = allowances.first(where: { $0.covers(finding) }) {
                    finding.ignoredBecause = allowance.reason
                }
                index[key] = findings.count
                findings.append(finding)
            }
        }
        return CompatibilityReport(findings: findings)
    }

    /// The location of the longest declared prefix of `path` (`Todo.people.age` → `Todo.people`).
    private func location(of path: String) -> SourceLocation? {
        var candidate = Substring(path)
        while true {
            if let location = locations[String(candidate)] { return location }
            guard let dot = candidate.lastIndex(of: ".") else { return nil }
            candidate = candidate[..<dot]
        }
    }
}

/// The outcome of a ``CompatibilityCheck``.
public struct CompatibilityReport: Sendable, Hashable, Codable {
    /// Every finding, in schema order, ignored ones included (marked).
    public var findings: [SchemaFinding]

    public init(findings: [SchemaFinding]) {
        self.findings = findings
    }

    /// Active findings with a breaking verdict.
    public var breaking: [SchemaFinding] { findings.filter { $0.isActive && $0.verdict == .breaking } }
    /// Active findings with a warning verdict.
    public var warnings: [SchemaFinding] { findings.filter { $0.isActive && $0.verdict == .warning } }

    /// No active breaking finding.
    public var isCompatible: Bool { breaking.isEmpty }

    /// Whether the check fails: a breaking finding, or with `strict` a warning too.
    public func fails(strict: Bool) -> Bool {
        !breaking.isEmpty || (strict && !warnings.isEmpty)
    }
}

import Foundation
import TandemSchema

/// Renders a ``CompatibilityReport`` or the rule list as text (grouped by verdict, colored
/// on a terminal), JSON, or GitHub Actions workflow commands.
struct FindingFormatter {
    var format: OutputFormat
    /// ANSI colors: on a terminal, unless `NO_COLOR` is set.
    var colored = isatty(STDOUT_FILENO) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil

    init(format: OutputFormat) {
        self.format = format
    }

    /// The version of the JSON output.
    static let jsonVersion = 1

    func render(_ report: CompatibilityReport, baselines: [String], title: String, strict: Bool) -> String {
        switch format {
        case .text: text(report, baselines: baselines, title: title, strict: strict)
        case .json: json(report, strict: strict)
        case .github: github(report, strict: strict)
        }
    }

    // MARK: Text

    private func paint(_ text: String, _ code: String) -> String {
        colored ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }

    private func text(_ report: CompatibilityReport, baselines: [String], title: String, strict: Bool) -> String {
        var out = ""
        let active = report.findings.filter(\.isActive)
        let counts = Verdict.allCases.reversed().map { verdict in (verdict, active.filter { $0.verdict == verdict }.count) }
        let ignored = report.findings.count - active.count
        let against = baselines.count == 1 ? baselines[0] : "\(baselines.count) baselines"
        if report.findings.isEmpty {
            return title == "diff"
                ? "tandem schema diff against \(against): no changes\n"
                : "tandem schema check against \(against): compatible — no breaking changes or warnings\n"
        }
        for (verdict, count) in counts where count > 0 {
            let (label, color, mark) =
                switch verdict {
                case .breaking: ("BREAKING", "1;31", "✗")
                case .warning: ("WARNING", "1;33", "!")
                case .safe: ("SAFE", "32", "✓")
                }
            out += paint("\(label) (\(count))", color) + "\n"
            for finding in active where finding.verdict == verdict {
                out += "  \(paint(mark, color)) \(paint(finding.rule, "1"))  \(finding.path)"
                if let location = finding.location { out += "  \(paint(location.description, "2"))" }
                out += "\n      \(finding.message)\n"
                if verdict != .safe { out += "      fix: \(finding.hint)\n" }
                if baselines.count > 1 { out += paint("      against: \(finding.baselines.joined(separator: ", "))", "2") + "\n" }
            }
            out += "\n"
        }
        if ignored > 0 {
            out += paint("IGNORED (\(ignored))", "2") + "\n"
            for finding in report.findings where !finding.isActive {
                out += "  - \(finding.rule)  \(finding.path): \(finding.ignoredBecause ?? "")\n"
            }
            out += "\n"
        }
        let summary = counts.filter { $0.1 > 0 }.map { "\($0.1) \($0.0.rawValue)" }.joined(separator: ", ")
        let verdict = title == "diff" ? "" : (report.fails(strict: strict) ? " — not compatible" : " — compatible")
        out += "tandem schema \(title) against \(against): \(summary.isEmpty ? "nothing active" : summary)\(ignored > 0 ? ", \(ignored) ignored" : "")\(verdict)\n"
        return out
    }

    // MARK: JSON

    private struct JSONFinding: Encodable {
        var rule: String
        var path: String
        var verdict: Verdict
        var message: String
        var hint: String
        var file: String?
        var line: Int?
        var baselines: [String]
        var ignored: String?
    }

    private struct JSONReport: Encodable {
        var version: Int
        var compatible: Bool
        var summary: [String: Int]
        var findings: [JSONFinding]
    }

    private func encode(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(value)) ?? Data(), as: UTF8.self) + "\n"
    }

    private func json(_ report: CompatibilityReport, strict: Bool) -> String {
        var summary: [String: Int] = [:]
        for verdict in Verdict.allCases { summary[verdict.rawValue] = report.findings.filter { $0.isActive && $0.verdict == verdict }.count }
        summary["ignored"] = report.findings.filter { !$0.isActive }.count
        let findings = report.findings.map {
            JSONFinding(
                rule: $0.rule, path: $0.path, verdict: $0.verdict, message: $0.message, hint: $0.hint,
                file: $0.location?.file, line: $0.location?.line, baselines: $0.baselines, ignored: $0.ignoredBecause)
        }
        return encode(JSONReport(version: Self.jsonVersion, compatible: !report.fails(strict: strict), summary: summary, findings: findings))
    }

    // MARK: GitHub

    /// Escapes a workflow command's message.
    private static func escapeData(_ text: String) -> String {
        text.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "\r", with: "%0D").replacingOccurrences(of: "\n", with: "%0A")
    }

    /// Escapes a workflow command's property value.
    private static func escapeProperty(_ text: String) -> String {
        escapeData(text).replacingOccurrences(of: ":", with: "%3A").replacingOccurrences(of: ",", with: "%2C")
    }

    private func github(_ report: CompatibilityReport, strict: Bool) -> String {
        var out = ""
        for finding in report.findings where finding.isActive {
            let command =
                switch finding.verdict {
                case .breaking: "error"
                case .warning: strict ? "error" : "warning"
                case .safe: "notice"
                }
            var properties: [String] = []
            if let location = finding.location {
                properties.append("file=\(Self.escapeProperty(location.file))")
                if location.line > 0 { properties.append("line=\(location.line)") }
            }
            properties.append("title=\(Self.escapeProperty("\(finding.rule) \(finding.path)"))")
            out += "::\(command) \(properties.joined(separator: ","))::\(Self.escapeData("\(finding.path): \(finding.message). Fix: \(finding.hint)"))\n"
        }
        return out
    }

    // MARK: Rules

    func render(rules: [CompatibilityRule]) -> String {
        if format == .json { return encode(rules) }
        var out = ""
        for category in CompatibilityRule.Category.allCases {
            let inCategory = rules.filter { $0.category == category }
            guard !inCategory.isEmpty else { continue }
            out += paint(category.rawValue.uppercased(), "1") + "\n"
            for rule in inCategory {
                out += "  \(rule.id.padding(toLength: 34, withPad: " ", startingAt: 0)) \(rule.verdict.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0)) \(rule.change)\n"
                if let note = rule.verdictNote { out += "      verdict: \(rule.verdict.rawValue), \(note)\n" }
                out += "      why: \(rule.rationale)\n      fix: \(rule.hint)\n"
            }
            out += "\n"
        }
        return out
    }
}

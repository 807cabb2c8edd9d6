public import Foundation

/// The ignore file of `tandem schema check`, `.tandem-schema.json`: reviewed findings to
/// ignore, each with a reason.
///
/// ```json
/// {
///   "version": 1,
///   "ignore": [
///     { "rule": "ENUM_CASE_ADDED", "path": "Todo.priority", "reason": "old clients map unknown values to .normal" }
///   ]
/// }
/// ```
///
/// ```swift
/// let ignores = try CompatibilityIgnores(json: Data(contentsOf: url), file: ".tandem-schema.json")
/// ```
public struct CompatibilityIgnores: Sendable, Hashable {
    /// The file format version this build reads.
    public static let formatVersion = 1

    public var allowances: [SchemaAllowance]

    public init(allowances: [SchemaAllowance] = []) {
        self.allowances = allowances
    }

    private struct File: Decodable {
        struct Entry: Decodable {
            var rule: String
            var path: String
            var reason: String?
        }
        var version: Int
        var ignore: [Entry]
    }

    /// Reads an ignore file.
    ///
    /// - Throws: ``SchemaError/Code/invalidConfiguration`` naming `file` for malformed JSON, an
    ///   unknown version or rule ID, or an entry without a reason.
    public init(json: Data, file: String) throws {
        let decoded: File
        do {
            decoded = try JSONDecoder().decode(File.self, from: json)
        } catch let error as DecodingError {
            throw SchemaError(.invalidConfiguration, "\(file): \(error.tandemDescription); expected {\"version\": 1, \"ignore\": [{\"rule\": …, \"path\": …, \"reason\": …}]}")
        }
        guard decoded.version == Self.formatVersion else {
            throw SchemaError(.invalidConfiguration, "\(file): version \(decoded.version) is not supported; this build reads version \(Self.formatVersion)")
        }
        allowances = try decoded.ignore.enumerated().map { index, entry in
            guard entry.rule == "*" || CompatibilityRule.named(entry.rule) != nil else {
                throw SchemaError(.invalidConfiguration, "\(file): ignore[\(index)]: unknown rule '\(entry.rule)'; `tandem schema rules` lists them")
            }
            guard let reason = entry.reason?.trimmingCharacters(in: .whitespaces), !reason.isEmpty else {
                throw SchemaError(.invalidConfiguration, "\(file): ignore[\(index)] (\(entry.rule) at \(entry.path)) needs a \"reason\"")
            }
            return SchemaAllowance(rule: entry.rule, path: entry.path, reason: reason, location: SourceLocation(file: file, line: 0))
        }
    }
}

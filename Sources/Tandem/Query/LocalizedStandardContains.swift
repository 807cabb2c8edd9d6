// Foundation on Linux lacks the `#Predicate` form of `localizedStandardContains`; Tandem adds
// it so the SwiftData spelling compiles, evaluates in memory, and runs in SQLite through the
// `tandem_localized_contains` SQL function (case- and diacritic-insensitive, like Foundation).

extension PredicateExpressions {
    /// `$0.title.localizedStandardContains("swift")` in a `#Predicate`.
    public struct StringLocalizedStandardContains<Root: PredicateExpression, Other: PredicateExpression>: PredicateExpression, Sendable
    where Root.Output: StringProtocol, Other.Output: StringProtocol, Root: Sendable, Other: Sendable {
        public typealias Output = Bool
        public let root: Root
        public let other: Other

        public init(root: Root, other: Other) {
            self.root = root
            self.other = other
        }

        public func evaluate(_ bindings: PredicateBindings) throws -> Bool {
            try root.evaluate(bindings).localizedStandardContains(try other.evaluate(bindings))
        }
    }

    /// Called by the `#Predicate` macro's expansion.
    public static func build_localizedStandardContains<Root, Other>(_ root: Root, _ other: Other) -> StringLocalizedStandardContains<Root, Other> {
        StringLocalizedStandardContains(root: root, other: other)
    }
}

extension PredicateExpressions.StringLocalizedStandardContains: Codable where Root: Codable, Other: Codable {}
extension PredicateExpressions.StringLocalizedStandardContains: StandardPredicateExpression
where Root: StandardPredicateExpression, Other: StandardPredicateExpression {}

extension PredicateExpressions.StringLocalizedStandardContains: SQLCompilable {
    func compile(_ compiler: inout PredicateCompiler) throws -> SQLExpression {
        let haystack = try compiler.operand(root), needle = try compiler.operand(other)
        return SQLExpression("tandem_localized_contains(\(haystack.sql), \(needle.sql))", haystack.arguments + needle.arguments)
    }
}

/// SQL functions every Tandem connection has.
enum SQLFunctions {
    static let localizedContains = DatabaseFunction("tandem_localized_contains", argumentCount: 2, pure: true) { values in
        guard let haystack = String.fromDatabaseValue(values[0]), let needle = String.fromDatabaseValue(values[1]) else { return false }
        return haystack.localizedStandardContains(needle)
    }

    static func register(in db: Database) {
        db.add(function: localizedContains)
    }
}

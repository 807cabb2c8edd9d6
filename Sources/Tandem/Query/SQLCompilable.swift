/// A predicate expression that knows how to become SQL. Foundation's `PredicateExpressions`
/// types conform in `PredicateExpressions+SQL.swift`; anything else is reported by name.
protocol SQLCompilable {
    func compile(_ compiler: inout PredicateCompiler) throws -> SQLExpression
}

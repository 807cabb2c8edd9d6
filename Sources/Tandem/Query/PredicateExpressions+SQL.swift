// Each Foundation predicate expression Tandem can run in SQLite, and its SQL.

extension PredicateExpressions.Variable: SQLCompilable {
    func compile(_ compiler: inout PredicateCompiler) throws -> SQLExpression {
        guard let bound = compiler.variables[key] else { throw compiler.unsupported("a variable from an enclosing scope") }
        return bound
    }
}

extension PredicateExpressions.Value: SQLCompilable {
    func compile(_ compiler: inout PredicateCompiler) throws -> SQLExpression {
        SQLExpression("?", kind: .captured(value))
    }
}

extension PredicateExpressions.NilLiteral: SQLCompilable {
    func compile(_ compiler: inout PredicateCompiler) throws -> SQLExpression { .null }
}

extension PredicateExpressions.KeyPath: SQLCompilable {
    func compile(_ compiler: inout PredicateCompiler) throws -> SQLExpression {
        let base = try compiler.compile(root)
        return try compiler.member(of: base, keyPath: keyPath)
    }
}

extension PredicateExpressions.Equal: SQLCompilable {
    func compile(_ compiler: inout PredicateCompiler) throws -> SQLExpression {
        try compiler.equality(lhs, rhs, negated: false)
    }
}

extension PredicateExpressions.NotEqual: SQLCompilable {
    func compile(_ compiler: inout PredicateCompiler) throws -> SQLExpression {
        try compiler.equality(lhs, rhs, negated: true)
    }
}

extension PredicateExpressions.Comparison: SQLCompilable {
    func compile(_ compiler: inout PredicateCompiler) throws -> SQLExpression {
        if LHS.Output.self == Decimal.self || LHS.Output.self == Decimal?.self {
            throw compiler.unsupported("ordering comparisons (<, >) on Decimal (stored as exact text, which does not order numerically; compare with ==, or store a Double)")
        }
        let symbol =
            switch op {
            case .lessThan: "<"
            case .lessThanOrEqual: "<="
            case .greaterThan: ">"
            case .greaterThanOrEqual: ">="
            }
        return try compiler.binary(lhs, symbol, rhs)
    }
}

extension PredicateExpressions.Conjunction: SQLCompilable {
    func compile(_ compiler: inout PredicateCompiler) throws -> SQLExpression {
        let l = try compiler.condition(lhs), r = try compiler.condition(rhs)
        return SQLExpression("(\(l.sql) AND \(r.sql))", l.arguments + r.arguments)
    }
}

extension PredicateExpressions.Disjunction: SQLCompilable {
    func compile(_ compiler: inout PredicateCompiler) throws -> SQLExpression {
        let l = try compiler.condition(lhs), r = try compiler.condition(rhs)
        return SQLExpression("(\(l.sql) OR \(r.sql))", l.arguments + r.arguments)
    }
}

extension PredicateExpressions.Negation: SQLCompilable {
    func compile(_ compiler: inout PredicateCompiler) throws -> SQLExpression {
        let inner = try compiler.condition(wrapped)
        return SQLExpression("(NOT \(inner.sql))", inner.arguments)
    }
}

extension PredicateExpressions.Arithmetic: SQLCompilable {
    func compile(_ compiler: inout PredicateCompiler) throws -> SQLExpression {
        let symbol =
            switch op {
            case .add: "+"
            case .subtract: "-"
            case .multiply: "*"
            }
        return try compiler.binary(lhs, symbol, rhs)
    }
}

extension PredicateExpressions.FloatDivision: SQLCompilable {
    func compile(_ compiler: inout PredicateCompiler) throws -> SQLExpression {
        let l = try compiler.operand(lhs), r = try compiler.operand(rhs)
        return SQLExpression("(CAST(\(l.sql) AS REAL) / \(r.sql))", l.arguments + r.arguments)
    }
}

extension PredicateExpressions.IntDivision: SQLCompilable {
    func compile(_ compiler: inout PredicateCompiler) throws -> SQLExpression {
        try compiler.binary(lhs, "/", rhs)
    }
}

extension PredicateExpressions.IntRemainder: SQLCompilable {
    func compile(_ compiler: inout PredicateCompiler) throws -> SQLExpression {
        try compiler.binary(lhs, "%", rhs)
    }
}

extension PredicateExpressions.UnaryMinus: SQLCompilable {
    func compile(_ compiler: inout PredicateCompiler) throws -> SQLExpression {
        let inner = try compiler.operand(wrapped)
        return SQLExpression("(-\(inner.sql))", inner.arguments, isNullable: inner.isNullable)
    }
}

extension PredicateExpressions.NilCoalesce: SQLCompilable {
    func compile(_ compiler: inout PredicateCompiler) throws -> SQLExpression {
        let l = try compiler.operand(lhs), r = try compiler.operand(rhs)
        return SQLExpression("COALESCE(\(l.sql), \(r.sql))", l.arguments + r.arguments, isNullable: r.isNullable, isText: l.isText)
    }
}

extension PredicateExpressions.ForcedUnwrap: SQLCompilable {
    func compile(_ compiler: inout PredicateCompiler) throws -> SQLExpression {
        var inner = try compiler.compile(self.inner)
        inner.isNullable = false
        return inner
    }
}

extension PredicateExpressions.OptionalFlatMap: SQLCompilable {
    func compile(_ compiler: inout PredicateCompiler) throws -> SQLExpression {
        // SQL propagates NULL on its own: `x?.y` is NULL when x is.
        let base = try compiler.compile(wrapped)
        compiler.variables[variable.key] = base
        var result = try compiler.compile(transform)
        if case .captured(let value) = result.kind { result = try compiler.capturedValue(value) }
        result.isNullable = true
        return result
    }
}

extension PredicateExpressions.Conditional: SQLCompilable {
    func compile(_ compiler: inout PredicateCompiler) throws -> SQLExpression {
        let c = try compiler.condition(test), t = try compiler.operand(trueBranch), f = try compiler.operand(falseBranch)
        return SQLExpression(
            "(CASE WHEN \(c.sql) THEN \(t.sql) ELSE \(f.sql) END)", c.arguments + t.arguments + f.arguments,
            isNullable: t.isNullable || f.isNullable)
    }
}

extension PredicateExpressions.CollectionContainsCollection: SQLCompilable {
    func compile(_ compiler: inout PredicateCompiler) throws -> SQLExpression {
        let haystack = try compiler.operand(base), needle = try compiler.operand(other)
        return SQLExpression("(instr(\(haystack.sql), \(needle.sql)) > 0)", haystack.arguments + needle.arguments)
    }
}

extension PredicateExpressions.SequenceStartsWith: SQLCompilable {
    func compile(_ compiler: inout PredicateCompiler) throws -> SQLExpression {
        let string = try compiler.operand(base), prefix = try compiler.operand(self.prefix)
        return SQLExpression("(instr(\(string.sql), \(prefix.sql)) = 1)", string.arguments + prefix.arguments)
    }
}

extension PredicateExpressions.SequenceContains: SQLCompilable {
    func compile(_ compiler: inout PredicateCompiler) throws -> SQLExpression {
        let container = try compiler.compile(sequence)
        switch container.kind {
        case .captured(let value):
            guard let values = value as? any Sequence else { throw compiler.unsupported("contains on a captured \(type(of: value))") }
            var arguments: [DatabaseValue] = []
            var containsNil = false
            for element in PredicateCompiler.elements(of: values) {
                let value = try PredicateCompiler.databaseValue(element)
                if value.isNull { containsNil = true } else { arguments.append(value) }
            }
            let item = try compiler.operand(element)
            // Swift semantics: `[nil].contains(x)` is true for a nil x, and never NULL.
            let nilTest = containsNil ? "\(item.sql) IS NULL OR " : ""
            let nilArguments = containsNil ? item.arguments : []
            if arguments.isEmpty { return containsNil ? SQLExpression("(\(item.sql) IS NULL)", item.arguments) : SQLExpression("0") }
            let list = Array(repeating: "?", count: arguments.count).joined(separator: ", ")
            return SQLExpression("(\(nilTest)COALESCE(\(item.sql) IN (\(list)), 0))", nilArguments + item.arguments + arguments)
        case .jsonCollection:
            let item = try compiler.operand(element)
            if let json = try compiler.jsonElement(element) {
                // The captured value, encoded as the column's JSON encodes it (dates,
                // UUIDs, enums…), then read back by SQLite's JSON functions.
                return SQLExpression("EXISTS (SELECT 1 FROM json_each(\(container.sql)) WHERE value = json_extract(?, '$[0]'))", container.arguments + [json])
            }
            return SQLExpression("EXISTS (SELECT 1 FROM json_each(\(container.sql)) WHERE value = \(item.sql))", container.arguments + item.arguments)
        default:
            guard container.isText else { throw compiler.unsupported("contains on a non-collection value") }
            let item = try compiler.operand(element)
            return SQLExpression("(instr(\(container.sql), \(item.sql)) > 0)", container.arguments + item.arguments)
        }
    }
}

extension PredicateExpressions.SequenceContainsWhere: SQLCompilable {
    func compile(_ compiler: inout PredicateCompiler) throws -> SQLExpression {
        try compiler.exists(in: sequence, variable: variable.key, test: test, negated: false)
    }
}

extension PredicateExpressions.SequenceAllSatisfy: SQLCompilable {
    func compile(_ compiler: inout PredicateCompiler) throws -> SQLExpression {
        try compiler.exists(in: sequence, variable: variable.key, test: test, negated: true)
    }
}

extension PredicateCompiler {
    mutating func binary(_ lhs: Any, _ symbol: String, _ rhs: Any) throws -> SQLExpression {
        let l = try operand(lhs), r = try operand(rhs)
        return SQLExpression("(\(l.sql) \(symbol) \(r.sql))", l.arguments + r.arguments, isNullable: l.isNullable || r.isNullable)
    }

    /// `==` / `!=` with Swift's optional semantics: `nil == nil` is true, `nil != 3` is true.
    mutating func equality(_ lhs: Any, _ rhs: Any, negated: Bool) throws -> SQLExpression {
        // `optionalComposite == nil` tests the composite's presence column.
        let left = try compile(lhs), right = try compile(rhs)
        for (side, other) in [(left, right), (right, left)] {
            if case .composite(let alias, let mapping, let layout, let base) = side.kind, case .null = other.kind {
                guard let presence = layout.presenceOffset else { return SQLExpression(negated ? "1" : "0") }
                let column = "\(alias).\(SQLName.quote(mapping.columns[Int(base + presence)].name))"
                return SQLExpression("(\(column) IS \(negated ? "NOT " : "")NULL)")
            }
        }
        let l = try concrete(left), r = try concrete(right)
        // `related?.x == value`: one uncorrelated IN subquery instead of one lookup per row.
        if !negated, r.sql == "?", r.arguments.count == 1, r.arguments[0] != .null, let hop = l.hop {
            // `link IS NOT NULL AND …`: a nil relationship would make IN yield NULL, where Swift
            // says false (and `!` true); written this way SQLite still uses the link's index.
            return SQLExpression(
                "(\(hop.link.sql) IS NOT NULL AND \(hop.link.sql) IN (SELECT \(hop.alias).\"#id\" FROM \(hop.table) AS \(hop.alias) WHERE \(hop.inner.sql) = ?))",
                hop.link.arguments + hop.link.arguments + hop.inner.arguments + r.arguments)
        }
        if case .null = r.kind { return SQLExpression("(\(l.sql) IS \(negated ? "NOT " : "")NULL)", l.arguments) }
        if case .null = l.kind { return SQLExpression("(\(r.sql) IS \(negated ? "NOT " : "")NULL)", r.arguments) }
        let op = negated ? "IS NOT" : (l.isNullable || r.isNullable ? "IS" : "=")
        return SQLExpression("(\(l.sql) \(op) \(r.sql))", l.arguments + r.arguments)
    }

    /// `EXISTS` over the elements of a JSON collection column.
    mutating func exists(in sequence: Any, variable: PredicateExpressions.VariableID, test: Any, negated: Bool) throws -> SQLExpression {
        let container = try compile(sequence)
        if case .toMany(_, _, let destination) = container.kind {
            // A semi-join: `owner IN (SELECT link FROM … WHERE test)` — the same rows as
            // `EXISTS (SELECT 1 FROM … WHERE link = owner AND test)`, but SQLite runs an
            // uncorrelated test once instead of once per owner.
            let alias = freshAlias()
            let (from, ownerColumn) = try semiJoin(container, alias: alias)
            variables[variable] = SQLExpression(alias, kind: .record(alias: alias, mapping: destination))
            let condition = try self.condition(test)
            let members = "SELECT \(ownerColumn) FROM \(from) WHERE \(ownerColumn) IS NOT NULL AND "
            let sql =
                negated
                ? "(\(container.sql) NOT IN (\(members)NOT (\(condition.sql))))"
                : "(\(container.sql) IN (\(members)\(condition.sql)))"
            return SQLExpression(sql, container.arguments + condition.arguments)
        }
        guard case .jsonCollection = container.kind else {
            throw unsupported("contains(where:) / allSatisfy on something other than a stored collection")
        }
        let alias = freshAlias()
        variables[variable] = SQLExpression("\(alias).value", isNullable: true)
        let condition = try self.condition(test)
        let sql =
            negated
            ? "NOT EXISTS (SELECT 1 FROM json_each(\(container.sql)) AS \(alias) WHERE NOT (\(condition.sql)))"
            : "EXISTS (SELECT 1 FROM json_each(\(container.sql)) AS \(alias) WHERE \(condition.sql))"
        return SQLExpression(sql, container.arguments + condition.arguments)
    }

    /// A key path applied to a compiled expression: an attribute or relationship of a
    /// record, a field of a composite, an attribute across a to-one relationship, or `count` /
    /// `isEmpty` of a string, collection or to-many relationship.
    mutating func member(of base: SQLExpression, keyPath: AnyKeyPath) throws -> SQLExpression {
        switch base.kind {
        case .record(let alias, let mapping):
            if mapping.identifierKeyPaths.contains(keyPath) {
                return SQLExpression("\(alias).\"#id\"", isText: true)
            }
            guard let (index, fields) = mapping.resolve(keyPath) else {
                throw unsupported("the key path \(keyPath) (not a stored property of \(mapping.name))")
            }
            var result = try property(index, of: alias, mapping)
            // A compound key path (`\Todo.people.age`, `\Article.category?.name`) continues.
            for component in fields { result = try field(component, of: result) }
            return result
        case .composite:
            var result = base
            for component in Self.components(keyPath) { result = try field(component, of: result) }
            return result
        case .toOne(let destination):
            if destination.identifierKeyPaths.contains(keyPath) {
                return SQLExpression(base.sql, base.arguments, isNullable: true, isText: true)
            }
            let alias = freshAlias()
            let inner = try member(of: SQLExpression(alias, kind: .record(alias: alias, mapping: destination)), keyPath: keyPath)
            return try across(base, alias: alias, destination: destination, inner)
        default:
            return try field(Self.propertyName(of: keyPath), of: base)
        }
    }

    /// Property `index` of the record `alias`.
    private mutating func property(_ index: Int, of alias: String, _ mapping: EntityMapping) throws -> SQLExpression {
        if let relationship = mapping.relationship(ofProperty: index) {
            guard let destination = mappings[relationship.destination] else {
                throw unsupported("the relationship \(mapping.name).\(relationship.name) (its destination is not in the container)")
            }
            if relationship.isToMany {
                return SQLExpression("\(alias).\"#id\"", kind: .toMany(relationship: relationship, source: mapping, destination: destination))
            }
            return SQLExpression("\(alias).\(SQLName.quote(relationship.name))", kind: .toOne(destination: destination), isNullable: true, isText: true)
        }
        guard let attribute = mapping.attribute(ofProperty: index) else { throw unsupported("property \(index) of \(mapping.name)") }
        let start = mapping.columnStart[index]
        if let layout = mapping.composites[index] {
            return SQLExpression(alias, kind: .composite(alias: alias, mapping: mapping, layout: layout, base: start))
        }
        let column = "\(alias).\(SQLName.quote(mapping.columns[Int(start)].name))"
        let kind: SQLExpression.Kind = if case .collection = attribute.type { .jsonCollection } else { .value }
        return SQLExpression(column, kind: kind, isNullable: attribute.isOptional, isText: attribute.type.sqlType == .text)
    }

    /// `inner`, read from the destination record `alias` of the to-one `link`, as a
    /// correlated subquery (NULL when the relationship is nil).
    private func across(_ link: SQLExpression, alias: String, destination: EntityMapping, _ inner: SQLExpression) throws -> SQLExpression {
        let from = "FROM \(destination.quotedTable) AS \(alias) WHERE \(alias).\"#id\" = \(link.sql)"
        switch inner.kind {
        case .value, .jsonCollection:
            var result = SQLExpression("(SELECT \(inner.sql) \(from))", inner.arguments + link.arguments, kind: inner.kind, isNullable: true, isText: inner.isText)
            result.hop = SQLExpression.Hop(link: link, table: destination.quotedTable, alias: alias, inner: inner)
            return result
        case .toOne(let next):
            return SQLExpression("(SELECT \(inner.sql) \(from))", inner.arguments + link.arguments, kind: .toOne(destination: next), isNullable: true, isText: true)
        case .toMany:
            // The owner of the to-many is the to-one's destination: its UUID is the link itself.
            return SQLExpression(link.sql, link.arguments, kind: inner.kind)
        default:
            throw unsupported("a composite across a to-one relationship (use one of its leaves)")
        }
    }

    /// FROM, and the column holding the owner's UUID, of a to-many relationship's members.
    func semiJoin(_ owner: SQLExpression, alias: String) throws -> (from: String, ownerColumn: String) {
        guard case .toMany(let relationship, let source, let destination) = owner.kind else { throw unsupported("a to-many walk") }
        switch schema.storage(of: relationship, in: source.entity) {
        case .inverseForeignKey:
            guard let inverse = relationship.inverse else { throw unsupported("a to-many relationship without inverse") }
            return ("\(destination.quotedTable) AS \(alias)", "\(alias).\(SQLName.quote(inverse))")
        case .joinTable(let name, let mine, let theirs):
            return (
                "\(SQLName.quote(name)) AS \(alias)_j JOIN \(destination.quotedTable) AS \(alias) ON \(alias).\"#id\" = \(alias)_j.\(theirs)",
                "\(alias)_j.\(mine)"
            )
        case .foreignKey:
            throw unsupported("a to-one relationship used as a collection")
        }
    }

    /// The name of a one-component key path on a string or collection. Standard-library
    /// properties are computed, so their description shows a result type instead of a name:
    /// compare with the known key paths first, then fall back on the result type.
    static func propertyName(of keyPath: AnyKeyPath) -> String {
        if keyPath == \String.count { return "count" }
        if keyPath == \String.isEmpty { return "isEmpty" }
        let text = keyPath.debugDescription
        if text.hasSuffix(".count") || text.hasSuffix("(Int)>") { return "count" }
        if text.hasSuffix(".isEmpty") || text.hasSuffix("(Bool)>") { return "isEmpty" }
        return text.split(separator: ".").last.map(String.init) ?? text
    }

    private mutating func field(_ name: String, of base: SQLExpression) throws -> SQLExpression {
        switch base.kind {
        case .toOne(let destination):
            guard let index = destination.componentIndex[name] else { throw unsupported("the property '\(name)' of \(destination.name)") }
            let alias = freshAlias()
            return try across(base, alias: alias, destination: destination, try property(index, of: alias, destination))
        case .toMany:
            let alias = freshAlias()
            let (from, ownerColumn) = try semiJoin(base, alias: alias)
            let link = "\(ownerColumn) = \(base.sql)"
            switch name {
            case "count": return SQLExpression("(SELECT COUNT(*) FROM \(from) WHERE \(link))", base.arguments)
            case "isEmpty": return SQLExpression("(NOT EXISTS (SELECT 1 FROM \(from) WHERE \(link)))", base.arguments)
            default: throw unsupported("the to-many property '\(name)' (predicates support count, isEmpty, contains(where:) and allSatisfy on relationships)")
            }
        case .composite(let alias, let mapping, let layout, let start):
            switch layout.fields[name] {
            case .leaf(let offset, let type):
                let column = mapping.columns[Int(start + offset)]
                let kind: SQLExpression.Kind = if case .collection = type { .jsonCollection } else { .value }
                return SQLExpression("\(alias).\(SQLName.quote(column.name))", kind: kind, isNullable: column.isNullable, isText: type.sqlType == .text)
            case .composite(let nested):
                return SQLExpression(alias, kind: .composite(alias: alias, mapping: mapping, layout: nested, base: start))
            case nil:
                throw unsupported("the field '\(name)' (not a stored field of the composite)")
            }
        case .jsonCollection:
            switch name {
            // json_each walks arrays and objects alike (Array, Set and Dictionary attributes).
            case "count": return SQLExpression("(SELECT COUNT(*) FROM json_each(\(base.sql)))", base.arguments, isNullable: base.isNullable)
            case "isEmpty": return SQLExpression("(NOT EXISTS (SELECT 1 FROM json_each(\(base.sql))))", base.arguments, isNullable: base.isNullable)
            default: throw unsupported("the collection property '\(name)' (on stored collections, predicates support count, isEmpty, contains, contains(where:) and allSatisfy)")
            }
        default:
            guard base.isText else { throw unsupported("the property '\(name)' of a non-text value") }
            switch name {
            case "count": return SQLExpression("length(\(base.sql))", base.arguments, isNullable: base.isNullable)
            case "isEmpty": return SQLExpression("(\(base.sql) = '')", base.arguments, isNullable: base.isNullable)
            default: throw unsupported("the string property '\(name)' (on strings, predicates support count, isEmpty, contains, starts(with:) and localizedStandardContains)")
            }
        }
    }
}

import Foundation
import SwiftSyntax
import TandemMacrosSupport
import TandemSchema

/// Builds the schema from a ``SourceIndex``, applying the runtime's storage rules to syntax:
/// the same decisions `AttributeTypeResolver`, `ShapeProbe` and `RelationshipResolver` make
/// on Swift types in a running app.
struct ExtractionBuilder {
    let index: SourceIndex
    let typeHints: [String: Schema.AttributeType]
    /// Only models nested in a type of this name (and top-level ones), when set.
    let scope: String?
    var locations: [String: TandemSchema.SourceLocation] = [:]
    var allowances: [SchemaAllowance] = []
    /// Qualified names of the types being resolved, to refuse a type that contains itself.
    var resolving: Set<String> = []

    init(index: SourceIndex, typeHints: [String: Schema.AttributeType], scope: String?) {
        self.index = index
        self.typeHints = typeHints
        self.scope = scope
    }

    /// A relationship property before inverses are inferred.
    struct RelationshipProperty {
        var name: String
        var destination: String
        var isToMany: Bool
        var isOptional: Bool
        var deleteRule: Schema.Relationship.DeleteRule
        /// `\Root.name` of `@Relationship(inverse:)`.
        var declaredInverse: (root: String, name: String)?
        var originalName: String?
        var location: TandemSchema.SourceLocation
    }

    /// Mirrors `AttributeTypeResolver.elementDepth`.
    static let elementDepth = 2

    mutating func build() throws -> ExtractedSchema {
        let models = index.models.filter { model in
            guard let scope else { return true }
            return model.scope.isEmpty || model.scope.last == scope || model.scope.joined(separator: ".") == scope
        }
        // The runtime refuses two models stored under one name, a class name or a first name
        // (versioned schemas declare one class per version, nested in a type per version).
        var byName: [String: [SourceIndex.Declared<ClassDeclSyntax>]] = [:]
        for model in models {
            let identity = (try? originalEntityName(of: model)).flatMap { $0 } ?? model.declaration.name.unescapedText
            byName[identity, default: []].append(model)
        }
        if let (name, duplicates) = byName.sorted(by: { $0.key < $1.key }).first(where: { $0.value.count > 1 }).map({ ($0.key, $0.value) }) {
            let listed = duplicates.map { "\(($0.scope + [$0.declaration.name.unescapedText]).joined(separator: ".")) (\($0.location))" }.joined(separator: ", ")
            let scopes = duplicates.compactMap(\.scope.last).map { "--scope \($0)" }
            throw SchemaError(
                .invalidSource,
                "several models are named or stored as \(name) (a class name, or an originalName): \(listed); a schema has one entity per name. Choose the version to extract\(scopes.isEmpty ? "" : " with " + scopes.joined(separator: " or "))",
                location: duplicates[0].location)
        }
        var entities: [Schema.Entity] = []
        var relationships: [String: [RelationshipProperty]] = [:]
        for declared in models {
            let (entity, relationshipProperties) = try entity(declared)
            entities.append(entity)
            relationships[entity.name] = relationshipProperties
        }
        for (position, entity) in entities.enumerated() {
            entities[position].relationships = try (relationships[entity.name] ?? []).map {
                try resolveRelationship($0, of: entity.name, all: relationships)
            }
        }
        return ExtractedSchema(schema: Schema(entities: entities), locations: locations, allowances: allowances)
    }

    // MARK: Entities

    private mutating func entity(_ declared: SourceIndex.Declared<ClassDeclSyntax>) throws -> (Schema.Entity, [RelationshipProperty]) {
        let declaration = declared.declaration
        let file = declared.file
        let name = declaration.name.unescapedText
        let memberScope = declared.scope + [name]
        if declaration.genericParameterClause != nil || name.lowercased().hasPrefix("tandem_") {
            throw SchemaError(
                .invalidSource, "\(declared.location): '\(name)' cannot be an entity name: names starting with 'tandem_' are reserved and generic classes cannot be models",
                location: declared.location)
        }
        locations[name] = declared.location
        try Self.refuseConditionalMembers(declaration.memberBlock, of: "model", name, file: file)
        try collectAllowances(declaration.leadingTrivia, path: name, file: file, node: declaration)
        let model = ModelDeclaration(declaration)
        if let diagnostic = model.diagnostics.first {
            let line = file.converter.location(for: diagnostic.position).line
            let location = TandemSchema.SourceLocation(file: file.path, line: line)
            throw SchemaError(.invalidSource, "\(location): \(name): \(diagnostic.message)", location: location)
        }
        var attributes: [Schema.Attribute] = []
        var relationships: [RelationshipProperty] = []
        // `ModelDeclaration` keeps detached copies of the syntax; find the declarations in the tree.
        var variables: [String: VariableDeclSyntax] = [:]
        for member in declaration.memberBlock.members {
            guard let variable = member.decl.as(VariableDeclSyntax.self) else { continue }
            for binding in variable.bindings {
                if let identifier = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier {
                    variables[identifier.text.trimmingCharacters(in: CharacterSet(charactersIn: "`"))] = variable
                }
            }
        }
        for property in model.persisted {
            let path = "\(name).\(property.name)"
            let variable = variables[property.name]
            let location = variable.map { file.location(of: $0.bindings.first!.pattern) } ?? locations[name]!
            locations[path] = location
            if let variable {
                try collectAllowances(variable.leadingTrivia, path: path, file: file, node: variable)
            }
            guard let type = property.type ?? Self.literalType(of: property.initializer) else {
                throw SchemaError(
                    .invalidSource, "\(location): \(path) has no type annotation; write its type (`var \(property.name): T`) so the schema can be read from source",
                    location: location)
            }
            if let relationship = try relationshipProperty(property, type: type, scope: memberScope, location: location) {
                relationships.append(relationship)
                continue
            }
            let resolved = try resolve(type, Use(path: path, scope: memberScope, file: file, location: location))
            attributes.append(
                Schema.Attribute(
                    name: property.name, type: resolved.type, isOptional: resolved.isOptional,
                    options: Set(try property.options.map { try option($0, path: path, location: location) }),
                    originalName: try property.originalName.map { try stringLiteral($0, what: "originalName", location: location) },
                    defaultValue: property.initializer?.trimmedDescription))
        }
        return (Schema.Entity(name: name, attributes: attributes, originalName: try originalEntityName(of: declared)), relationships)
    }

    /// The `originalName:` of the class's `@Model(originalName: "…")`, if any.
    private func originalEntityName(of declared: SourceIndex.Declared<ClassDeclSyntax>) throws -> String? {
        for case .attribute(let attribute) in declared.declaration.attributes where SourceIndex.simpleName(of: attribute.attributeName) == "Model" {
            guard let argument = attribute.arguments?.as(LabeledExprListSyntax.self)?.first(where: { $0.label?.text == "originalName" }) else { continue }
            if argument.expression.is(NilLiteralExprSyntax.self) { return nil }
            let location = declared.file.location(of: attribute)
            let value = try stringLiteral(argument.expression, what: "originalName", location: location)
            guard !value.isEmpty else { throw SchemaError(.invalidSource, "\(location): originalName must name the model's first name, not be empty", location: location) }
            return value
        }
        return nil
    }

    private func option(_ expression: ExprSyntax, path: String, location: TandemSchema.SourceLocation) throws -> Schema.Attribute.Option {
        let name = expression.as(MemberAccessExprSyntax.self)?.declName.baseName.text ?? expression.trimmedDescription
        guard let option = Schema.Attribute.Option(rawValue: name) else {
            throw SchemaError(
                .invalidSource,
                "\(location): \(path): unknown @Attribute option \(expression.trimmedDescription); Tandem knows \(Schema.Attribute.Option.allCases.map { ".\($0.rawValue)" }.joined(separator: ", "))",
                location: location)
        }
        return option
    }

    private func stringLiteral(_ expression: ExprSyntax, what: String, location: TandemSchema.SourceLocation) throws -> String {
        guard let literal = expression.as(StringLiteralExprSyntax.self), let value = literal.representedLiteralValue else {
            throw SchemaError(.invalidSource, "\(location): \(what) must be a plain string literal, not \(expression.trimmedDescription)", location: location)
        }
        return value
    }

    /// The type of a simple literal initializer (`var count = 0`), as Swift infers it.
    static func literalType(of initializer: ExprSyntax?) -> TypeSyntax? {
        guard let initializer else { return nil }
        let name: String
        if initializer.is(IntegerLiteralExprSyntax.self) {
            name = "Int"
        } else if initializer.is(FloatLiteralExprSyntax.self) {
            name = "Double"
        } else if initializer.is(BooleanLiteralExprSyntax.self) {
            name = "Bool"
        } else if initializer.is(StringLiteralExprSyntax.self) {
            name = "String"
        } else {
            return nil
        }
        return TypeSyntax(IdentifierTypeSyntax(name: .identifier(name)))
    }

    // MARK: Relationships

    private func relationshipProperty(
        _ property: PersistedProperty, type: TypeSyntax, scope: [String],
        location: TandemSchema.SourceLocation
    ) throws -> RelationshipProperty? {
        /// The entity name when `type` names a `@Model` class.
        func model(_ type: TypeSyntax) -> String? {
            guard let name = TypeShape.dottedName(type), case .found(_, .model(let declared)) = index.lookup(name, from: scope) else { return nil }
            return declared.declaration.name.unescapedText
        }
        var destination: String?
        var isToMany = false
        var isOptional = false
        if let (wrapped, _) = TypeShape.unwrapOptional(type) {
            if let name = model(wrapped) {
                destination = name
                isOptional = true
            } else if let element = TypeShape.arrayElement(wrapped), let name = model(element) {
                throw SchemaError(
                    .invalidSource, "\(location): \(property.name): a to-many relationship is an array, never nil; write [\(name)] = []",
                    location: location)
            }
        } else if let name = model(type) {
            destination = name
        } else if let element = TypeShape.arrayElement(type), let name = model(element) {
            destination = name
            isToMany = true
        } else if let (element, _) = TypeShape.collection(type), let name = model(element) {
            throw SchemaError(.invalidSource, "\(location): \(property.name): only an array of \(name) is a to-many relationship", location: location)
        }
        guard let destination else { return nil }
        var deleteRule = Schema.Relationship.DeleteRule.nullify
        if let expression = property.deleteRule {
            let name = expression.as(MemberAccessExprSyntax.self)?.declName.baseName.text ?? expression.trimmedDescription
            guard let rule = Schema.Relationship.DeleteRule(rawValue: name) else {
                throw SchemaError(.invalidSource, "\(location): unknown delete rule \(expression.trimmedDescription)", location: location)
            }
            deleteRule = rule
        }
        var declaredInverse: (String, String)?
        if let expression = property.inverse {
            guard let keyPath = expression.as(KeyPathExprSyntax.self), let root = keyPath.root,
                let component = keyPath.components.last?.component.as(KeyPathPropertyComponentSyntax.self)
            else {
                throw SchemaError(.invalidSource, "\(location): inverse: must be a key path such as \\Other.property, not \(expression.trimmedDescription)", location: location)
            }
            declaredInverse = (SourceIndex.simpleName(of: root), component.declName.baseName.text)
        }
        return RelationshipProperty(
            name: property.name, destination: destination, isToMany: isToMany, isOptional: isOptional,
            deleteRule: deleteRule, declaredInverse: declaredInverse,
            originalName: try property.originalName.map { try stringLiteral($0, what: "originalName", location: location) },
            location: location)
    }

    /// `RelationshipResolver`'s rules: an explicit inverse wins; the other side may name this
    /// property; otherwise inferred when exactly one relationship on each side points at the other.
    private func resolveRelationship(
        _ property: RelationshipProperty, of entity: String,
        all: [String: [RelationshipProperty]]
    ) throws -> Schema.Relationship {
        if !property.isToMany && !property.isOptional {
            throw SchemaError(
                .invalidSource, "\(property.location): to-one relationship \(entity).\(property.name) must be optional (\(property.destination)?)",
                location: property.location)
        }
        let theirs = (all[property.destination] ?? []).filter { $0.destination == entity }
        var inverse: String?
        if let declared = property.declaredInverse {
            guard declared.root == property.destination, let match = theirs.first(where: { $0.name == declared.name }) else {
                throw SchemaError(
                    .invalidSource, "\(property.location): the inverse of \(entity).\(property.name) must be a relationship of \(property.destination) pointing back at \(entity)",
                    location: property.location)
            }
            inverse = match.name
        } else if let pointing = theirs.first(where: { $0.declaredInverse.map { $0.root == entity && $0.name == property.name } ?? false }) {
            inverse = pointing.name
        } else {
            let mine = (all[entity] ?? []).filter { $0.destination == property.destination }
            if mine.count == 1, theirs.count == 1, theirs[0].declaredInverse == nil,
                !(property.destination == entity && theirs[0].name == property.name)
            {
                inverse = theirs[0].name
            }
        }
        return Schema.Relationship(
            name: property.name, destination: property.destination,
            cardinality: property.isToMany ? .toMany : .toOne, inverse: inverse,
            deleteRule: property.deleteRule, isOptional: !property.isToMany,
            originalName: property.originalName)
    }

    // MARK: Allowances

    /// Reads `// tandem:allow RULE_ID reason` lines from a declaration's leading comments.
    mutating func collectAllowances(_ trivia: Trivia, path: String, file: SourceIndex.File, node: some SyntaxProtocol) throws {
        for piece in trivia {
            let text: String
            switch piece {
            case .lineComment(let comment): text = String(comment.dropFirst(2))
            case .docLineComment(let comment): text = String(comment.dropFirst(3))
            default: continue
            }
            let words = text.trimmingCharacters(in: .whitespaces)
            guard words.hasPrefix("tandem:allow") else { continue }
            let location = file.location(of: node)
            let parts = words.dropFirst("tandem:allow".count).split(separator: " ", maxSplits: 1).map(String.init)
            guard let rule = parts.first, CompatibilityRule.named(rule) != nil || rule == "*" else {
                throw SchemaError(
                    .invalidConfiguration, "\(location): `// tandem:allow` needs a known rule ID (`tandem schema rules` lists them): \(words)",
                    location: location)
            }
            let reason = parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : ""
            guard !reason.isEmpty else {
                throw SchemaError(.invalidConfiguration, "\(location): `// tandem:allow \(rule)` needs a reason after the rule ID", location: location)
            }
            allowances.append(SchemaAllowance(rule: rule, path: path, reason: reason, location: location))
        }
    }
}

import Foundation
import SwiftSyntax
import TandemSchema

extension ExtractionBuilder {
    /// A resolved storage shape.
    struct Resolved {
        var type: Schema.AttributeType
        var isOptional: Bool
    }

    /// Where a type is used: decides lookups (`scope`), error locations and the runtime's
    /// extra rules for composite fields.
    struct Use {
        /// The model path, e.g. `Todo.people.age`.
        var path: String
        /// The enclosing types of the declaration using the type.
        var scope: [String]
        var file: SourceIndex.File
        var location: TandemSchema.SourceLocation
        /// How many collections enclose the type.
        var collections = 0
        /// A field of a composite: the runtime must be able to make a placeholder value of it.
        var isCompositeField = false
    }

    /// `AttributeTypeResolver.resolve` on syntax: optional, scalar, enum with a raw value
    /// (or a `RawRepresentable` struct), collection, then Codable structs (composite) and
    /// other Codable types (JSON).
    mutating func resolve(_ type: TypeSyntax, _ use: Use) throws -> Resolved {
        if let (wrapped, nested) = TypeShape.unwrapOptional(type) {
            if nested {
                throw SchemaError(
                    .invalidSource, "\(use.location): \(use.path) has a nested optional type \(type.trimmedDescription), which cannot be stored (a column has only one NULL)",
                    location: use.location)
            }
            var resolved = try resolve(wrapped, use)
            resolved.isOptional = true
            return resolved
        }
        if let name = TypeShape.plainName(type), let scalar = TypeShape.scalars[name], !isDeclared(name, use) {
            return Resolved(type: .scalar(scalar), isOptional: false)
        }
        if let (element, _) = TypeShape.collection(type) {
            var elementType: Schema.AttributeType?
            if use.collections < Self.elementDepth {
                var elementUse = use
                elementUse.collections += 1
                elementUse.isCompositeField = false
                do {
                    elementType = try resolve(element, elementUse).type
                } catch let error as SchemaError where error.code == .invalidSource {
                    // Like the runtime: an element whose shape cannot be read is left out.
                    elementType = nil
                }
            }
            return Resolved(type: .collection(typeName: TypeShape.runtimeName(type), element: elementType), isOptional: false)
        }
        let name = TypeShape.dottedName(type) ?? type.trimmedDescription
        if let hint = typeHints[name] ?? typeHints[TypeShape.plainName(type) ?? name] {
            return Resolved(type: hint, isOptional: false)
        }
        switch index.lookup(name, from: use.scope) {
        case .found(let qualifiedName, let declaration):
            return try resolve(declaration, qualifiedName: qualifiedName, use)
        case .ambiguous(let candidates):
            throw SchemaError(
                .invalidSource,
                "\(use.location): \(use.path) has type \(name), which several declarations could be: \(candidates.joined(separator: ", ")); qualify it (Outer.\(name)) or pass only the sources of one app",
                location: use.location)
        case .notFound:
            throw SchemaError(
                .invalidSource,
                "\(use.location): \(use.path) has type \(type.trimmedDescription), which is not defined in the given sources; add the file that defines it, or describe its storage in a --types file",
                location: use.location)
        }
    }

    private func isDeclared(_ name: String, _ use: Use) -> Bool {
        if case .found = index.lookup(name, from: use.scope) { return true }
        return false
    }

    private mutating func resolve(_ declaration: SourceIndex.TypeDeclaration, qualifiedName: String, _ use: Use) throws -> Resolved {
        switch declaration {
        case .alias(let alias):
            guard !resolving.contains(qualifiedName) else { throw recursive(qualifiedName, use) }
            resolving.insert(qualifiedName)
            defer { resolving.remove(qualifiedName) }
            var aliasUse = use
            aliasUse.scope = alias.scope
            return try resolve(alias.declaration.initializer.value, aliasUse)
        case .enumeration(let declared):
            return Resolved(type: try enumeration(declared, qualifiedName: qualifiedName, use), isOptional: false)
        case .structure(let declared):
            guard !resolving.contains(qualifiedName) else { throw recursive(qualifiedName, use) }
            resolving.insert(qualifiedName)
            defer { resolving.remove(qualifiedName) }
            return Resolved(type: try structure(declared, qualifiedName: qualifiedName, use), isOptional: false)
        case .model, .other:
            throw SchemaError(
                .invalidSource,
                "\(use.location): \(use.path) has type \(qualifiedName), which Tandem cannot store: use a scalar, an enum with a raw value, a Codable struct or collection, or a relationship to a model",
                location: use.location)
        }
    }

    private func recursive(_ name: String, _ use: Use) -> SchemaError {
        SchemaError(
            .invalidSource, "\(use.location): \(use.path): \(name) contains itself; a stored type cannot be recursive outside a collection",
            location: use.location)
    }

    private static func isCodable(_ conformances: Set<String>) -> Bool {
        conformances.contains("Codable") || (conformances.contains("Encodable") && conformances.contains("Decodable"))
    }

    // MARK: Enums

    private mutating func enumeration(_ declared: SourceIndex.Declared<EnumDeclSyntax>, qualifiedName: String, _ use: Use) throws -> Schema.AttributeType {
        let declaration = declared.declaration
        let name = declaration.name.unescapedText
        let conformances = index.conformances(of: qualifiedName, inheritance: declaration.inheritanceClause)
        guard Self.isCodable(conformances) else {
            throw SchemaError(
                .invalidSource, "\(declared.location): enum \(name) (used by \(use.path)) is not Codable, so Tandem cannot store it; add `Codable`",
                location: declared.location)
        }
        try collectAllowances(declaration.leadingTrivia, path: use.path, file: declared.file, node: declaration)
        try Self.refuseConditionalMembers(declaration.memberBlock, of: "enum", name, file: declared.file)
        let elements = declaration.memberBlock.members
            .compactMap { $0.decl.as(EnumCaseDeclSyntax.self) }
            .flatMap { caseDeclaration in caseDeclaration.elements.map { (caseDeclaration, $0) } }
        let rawTypeName = declaration.inheritanceClause?.inheritedTypes.lazy
            .compactMap { TypeShape.plainName($0.type) }
            .first { TypeShape.scalars[$0] != nil || $0 == "Character" }
        guard let rawTypeName else {
            if use.isCompositeField {
                throw SchemaError(
                    .invalidSource,
                    "\(use.location): \(use.path) has type \(name), an enum without raw values, which Tandem cannot store inside a composite; give it raw values, or make it a top-level attribute (stored as JSON)",
                    location: use.location)
            }
            // Encoded by case name and payload labels: one JSON column. The shape is
            // normalized (cases sorted, no spaces) so that reordering is not a change.
            let shape = elements.map { _, element in
                element.name.unescapedText
                    + (element.parameterClause.map { clause in
                        "("
                            + clause.parameters.map {
                                ($0.firstName.map { "\($0.unescapedText):" } ?? "") + $0.type.trimmedDescription.filter { !$0.isWhitespace }
                            }.joined(separator: ",") + ")"
                    } ?? "")
            }.sorted().joined(separator: ", ")
            return .json(typeName: name, shape: "cases: " + shape)
        }
        guard let rawType = TypeShape.scalars[rawTypeName] else {
            throw SchemaError(
                .invalidSource, "\(declared.location): enum \(name) has raw type \(rawTypeName), which is not a storable scalar",
                location: declared.location)
        }
        // A type with its own description prints that, not the case name, at runtime.
        let namesAreRawValues = conformances.contains("CustomStringConvertible")
        var cases: [Schema.Enumeration.Case] = []
        var previous: Decimal?
        for (caseDeclaration, element) in elements {
            let location = declared.file.location(of: element)
            let caseName = element.name.unescapedText
            let raw: String
            if let value = element.rawValue?.value {
                let (text, number) = try rawValue(value, type: rawType, location: location)
                raw = text
                previous = number
            } else if rawType == .string {
                raw = caseName
            } else if let last = previous ?? (cases.isEmpty ? -1 : nil), Self.isWhole(last) {
                let next = last + 1
                raw = Self.describe(next, as: rawType)
                previous = next
            } else {
                throw SchemaError(.invalidSource, "\(location): case \(caseName) of \(name) needs an explicit raw value", location: location)
            }
            let displayed = namesAreRawValues ? raw : caseName
            cases.append(Schema.Enumeration.Case(name: displayed, rawValue: raw))
            locations["\(use.path).\(displayed)"] = location
            try collectAllowances(caseDeclaration.leadingTrivia, path: "\(use.path).\(displayed)", file: declared.file, node: caseDeclaration)
        }
        let isCaseIterable = conformances.contains("CaseIterable")
        if use.isCompositeField && !isCaseIterable, !cases.contains(where: { $0.rawValue == Self.placeholder(rawType) }) {
            throw SchemaError(
                .invalidSource,
                "\(use.location): \(use.path) has type \(name), which Tandem cannot store inside a composite unless it is CaseIterable (or has a case with raw value \(Self.placeholder(rawType).debugDescription)); make it CaseIterable",
                location: use.location)
        }
        // The sources list every case, CaseIterable or not (a running app lists only a
        // CaseIterable enum's; its schema then matches this one: `Schema.isVersion(of:)`).
        return .enumeration(Schema.Enumeration(typeName: name, rawType: rawType, cases: cases))
    }

    /// The placeholder the runtime probes with, as `String(describing:)` prints it.
    private static func placeholder(_ type: Schema.ScalarType) -> String {
        switch type {
        case .string: ""
        case .double, .float: "0.0"
        default: "0"
        }
    }

    private static func isWhole(_ value: Decimal) -> Bool {
        var value = value, rounded = Decimal()
        NSDecimalRound(&rounded, &value, 0, .plain)
        return rounded == value
    }

    private static func describe(_ value: Decimal, as type: Schema.ScalarType) -> String {
        let double = NSDecimalNumber(decimal: value).doubleValue
        switch type {
        case .double: return String(describing: double)
        case .float: return String(describing: Float(double))
        default: return "\(value)"
        }
    }

    /// A raw value literal as `String(describing: rawValue)` prints it, and its number.
    private func rawValue(_ expression: ExprSyntax, type: Schema.ScalarType, location: TandemSchema.SourceLocation) throws -> (String, Decimal?) {
        if let string = expression.as(StringLiteralExprSyntax.self), let value = string.representedLiteralValue {
            return (value, nil)
        }
        var text = expression.trimmedDescription.replacingOccurrences(of: "_", with: "")
        var negative = false
        if text.hasPrefix("-") {
            negative = true
            text.removeFirst()
        }
        let integer: UInt64? =
            if text.hasPrefix("0x") { UInt64(text.dropFirst(2), radix: 16) } else if text.hasPrefix("0o") { UInt64(text.dropFirst(2), radix: 8) } else if text.hasPrefix("0b") {
                UInt64(text.dropFirst(2), radix: 2)
            } else { UInt64(text) }
        switch type {
        case .double, .float:
            guard let value = Double(text) ?? integer.map(Double.init) else { break }
            let signed = negative ? -value : value
            let printed = type == .float ? String(describing: Float(signed)) : String(describing: signed)
            return (printed, Decimal(string: printed))
        default:
            guard let magnitude = integer else { break }
            let printed = negative ? "-\(magnitude)" : "\(magnitude)"
            return (printed, Decimal(string: printed))
        }
        throw SchemaError(.invalidSource, "\(location): cannot read the raw value \(expression.trimmedDescription)", location: location)
    }

    // MARK: Structs

    private mutating func structure(_ declared: SourceIndex.Declared<StructDeclSyntax>, qualifiedName: String, _ use: Use) throws -> Schema.AttributeType {
        let declaration = declared.declaration
        let name = declaration.name.unescapedText
        let conformances = index.conformances(of: qualifiedName, inheritance: declaration.inheritanceClause)
        guard Self.isCodable(conformances) else {
            throw SchemaError(
                .invalidSource, "\(declared.location): struct \(name) (used by \(use.path)) is not Codable, so Tandem cannot store it; add `Codable`",
                location: declared.location)
        }
        try Self.refuseConditionalMembers(declaration.memberBlock, of: "struct", name, file: declared.file)
        let members = declaration.memberBlock.members.map(\.decl)
        if conformances.contains("RawRepresentable") || conformances.contains("OptionSet") {
            return try rawRepresentable(declared, members: members, use)
        }
        return try composite(declared, qualifiedName: qualifiedName, members: members, use)
    }

    /// A `RawRepresentable` struct (an `OptionSet`…): stored by raw value, like an enum
    /// whose cases cannot be listed.
    private func rawRepresentable(_ declared: SourceIndex.Declared<StructDeclSyntax>, members: [DeclSyntax], _ use: Use) throws -> Schema.AttributeType {
        let name = declared.declaration.name.unescapedText
        let rawType = members.lazy.compactMap { member -> TypeSyntax? in
            if let alias = member.as(TypeAliasDeclSyntax.self), alias.name.text == "RawValue" { return alias.initializer.value }
            guard let variable = member.as(VariableDeclSyntax.self),
                let binding = variable.bindings.first(where: { $0.pattern.as(IdentifierPatternSyntax.self)?.identifier.text == "rawValue" })
            else { return nil }
            return binding.typeAnnotation?.type
        }.first
        guard let rawType, let scalarName = TypeShape.plainName(rawType), let scalar = TypeShape.scalars[scalarName] else {
            throw SchemaError(
                .invalidSource,
                "\(declared.location): \(name) is RawRepresentable, but its rawValue's type cannot be read or is not a storable scalar; declare `var rawValue: Int` (or another scalar)",
                location: declared.location)
        }
        return .enumeration(Schema.Enumeration(typeName: name, rawType: scalar, cases: nil))
    }

    /// `ShapeProbe` on syntax: a Codable struct with a synthesized `init(from:)` is a composite
    /// of its decoded stored properties, keyed and ordered by `CodingKeys` when it has one.
    private mutating func composite(
        _ declared: SourceIndex.Declared<StructDeclSyntax>, qualifiedName: String,
        members: [DeclSyntax], _ use: Use
    ) throws -> Schema.AttributeType {
        let declaration = declared.declaration
        let name = declaration.name.unescapedText
        try collectAllowances(declaration.leadingTrivia, path: use.path, file: declared.file, node: declaration)
        if members.contains(where: { $0.as(InitializerDeclSyntax.self)?.signature.parameterClause.parameters.first?.firstName.text == "from" }) {
            throw SchemaError(
                .invalidSource,
                "\(declared.location): struct \(name) (used by \(use.path)) has a hand-written init(from:), whose fields cannot be read from source; describe its storage in a --types file",
                location: declared.location)
        }
        // Stored properties the synthesized init(from:) decodes, in declaration order.
        var properties: [(name: String, type: TypeSyntax, location: TandemSchema.SourceLocation, variable: VariableDeclSyntax)] = []
        for member in members {
            guard let variable = member.as(VariableDeclSyntax.self),
                !variable.modifiers.contains(where: { ["static", "class", "lazy"].contains($0.name.text) })
            else { continue }
            let isLet = variable.bindingSpecifier.tokenKind == .keyword(.let)
            let bindings = Array(variable.bindings)
            for (position, binding) in bindings.enumerated() {
                guard binding.accessorBlock.map({ Self.isObserversOnly($0) }) ?? true,
                    let identifier = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier
                else { continue }
                // A `let` with an initial value is not decoded by the synthesized init(from:).
                if isLet && binding.initializer != nil { continue }
                let location = declared.file.location(of: binding)
                guard
                    let type = bindings[position...].lazy.compactMap(\.typeAnnotation).first?.type
                        ?? Self.literalType(of: binding.initializer?.value)
                else {
                    throw SchemaError(.invalidSource, "\(location): \(use.path).\(identifier.unescapedText) has no type annotation; write its type", location: location)
                }
                properties.append((identifier.unescapedText, type, location, variable))
            }
        }
        // With CodingKeys, the synthesized init(from:) decodes in the order of its cases.
        var ordered: [(key: String, property: (name: String, type: TypeSyntax, location: TandemSchema.SourceLocation, variable: VariableDeclSyntax))] = []
        if let codingKeys = members.lazy.compactMap({ $0.as(EnumDeclSyntax.self) }).first(where: { $0.name.text == "CodingKeys" }) {
            for element in codingKeys.memberBlock.members.compactMap({ $0.decl.as(EnumCaseDeclSyntax.self) }).flatMap(\.elements) {
                let caseName = element.name.unescapedText
                guard let property = properties.first(where: { $0.name == caseName }) else { continue }
                let key = element.rawValue?.value.as(StringLiteralExprSyntax.self)?.representedLiteralValue ?? caseName
                ordered.append((key, property))
            }
        } else {
            ordered = properties.map { ($0.name, $0) }
        }
        var fields: [Schema.Field] = []
        for (key, property) in ordered where !fields.contains(where: { $0.name == key }) {
            let fieldPath = "\(use.path).\(key)"
            locations[fieldPath] = property.location
            try collectAllowances(property.variable.leadingTrivia, path: fieldPath, file: declared.file, node: property.variable)
            let fieldUse = Use(
                path: fieldPath, scope: declared.scope + [name], file: declared.file, location: property.location,
                collections: use.collections, isCompositeField: true)
            let resolved = try resolve(property.type, fieldUse)
            fields.append(Schema.Field(name: key, type: resolved.type, isOptional: resolved.isOptional))
        }
        return .composite(Schema.Composite(typeName: name, fields: fields))
    }

    private static func isObserversOnly(_ block: AccessorBlockSyntax) -> Bool {
        guard case .accessors(let list) = block.accessors else { return false }
        return list.allSatisfy { [.keyword(.willSet), .keyword(.didSet)].contains($0.accessorSpecifier.tokenKind) }
    }
}

extension ExtractionBuilder {
    /// Refuses stored properties or enum cases declared inside `#if` in `block` (of `kind`
    /// `name`): which of them exist depends on build flags the sources do not say, and a
    /// case left out renumbers the implicit raw values after it.
    ///
    /// - Throws: ``SchemaError`` with code `invalidSource`, naming the `#if`.
    static func refuseConditionalMembers(_ block: MemberBlockSyntax, of kind: String, _ name: String, file: SourceIndex.File) throws {
        func conditional(_ members: MemberBlockItemListSyntax) -> IfConfigDeclSyntax? {
            for member in members {
                guard let ifConfig = member.decl.as(IfConfigDeclSyntax.self) else { continue }
                for clause in ifConfig.clauses {
                    guard case .decls(let decls) = clause.elements else { continue }
                    if decls.contains(where: { $0.decl.is(VariableDeclSyntax.self) || $0.decl.is(EnumCaseDeclSyntax.self) }) { return ifConfig }
                    if let nested = conditional(decls) { return nested }
                }
            }
            return nil
        }
        guard let found = conditional(block.members) else { return }
        let location = file.location(of: found)
        throw SchemaError(
            .invalidSource,
            "\(location): \(kind) \(name) declares stored properties or cases inside #if; which exist depends on build flags tandem schema extract cannot know (and implicit raw values after them would change). Move them out of #if, or describe the type with --types",
            location: location)
    }
}

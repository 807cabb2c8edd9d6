import Foundation
import SwiftSyntax
import TandemSchema

extension ExtractionBuilder {
    /// A resolved storage shape.
    struct Resolved {
        var type: Schema.AttributeType
        var isOptional: Bool
    }

    /// `AttributeTypeResolver.resolve` on syntax: optional, scalar, enum with a raw value,
    /// collection, then Codable structs (composite) and other Codable types (JSON).
    ///
    /// - Parameter collections: how many collections enclose the type.
    /// - Parameter location: the declaration using the type, for errors.
    mutating func resolve(_ type: TypeSyntax, path: String, file: SourceIndex.File, collections: Int,
                          at location: TandemSchema.SourceLocation) throws -> Resolved {
        if let (wrapped, nested) = TypeShape.unwrapOptional(type) {
            if nested {
                throw SchemaError(.invalidSource, "\(location): \(path) has a nested optional type \(type.trimmedDescription), which cannot be stored (a column has only one NULL)",
                                  location: location)
            }
            var resolved = try resolve(wrapped, path: path, file: file, collections: collections, at: location)
            resolved.isOptional = true
            return resolved
        }
        if let name = TypeShape.plainName(type), let scalar = TypeShape.scalars[name] {
            return Resolved(type: .scalar(scalar), isOptional: false)
        }
        if let (element, _) = TypeShape.collection(type) {
            var elementType: Schema.AttributeType?
            if collections < Self.elementDepth {
                // Like the runtime: an element whose shape cannot be read is left out.
                elementType = try? resolve(element, path: "\(path)[]", file: file, collections: collections + 1, at: location).type
            }
            return Resolved(type: .collection(typeName: TypeShape.runtimeName(type), element: elementType), isOptional: false)
        }
        let name = TypeShape.plainName(type) ?? type.trimmedDescription
        if let declared = index.enums[name] {
            return Resolved(type: try enumeration(declared, path: path), isOptional: false)
        }
        if let declared = index.structs[name], typeHints[name] == nil {
            return Resolved(type: try composite(declared, path: path, collections: collections), isOptional: false)
        }
        if let hint = typeHints[name] {
            return Resolved(type: hint, isOptional: false)
        }
        throw SchemaError(.invalidSource, "\(location): \(path) has type \(type.trimmedDescription), which is not defined in the given sources; add the file that defines it, or describe its storage in a --types file",
                          location: location)
    }

    private static func isCodable(_ conformances: Set<String>) -> Bool {
        conformances.contains("Codable") || (conformances.contains("Encodable") && conformances.contains("Decodable"))
    }

    // MARK: Enums

    private mutating func enumeration(_ declared: SourceIndex.Declared<EnumDeclSyntax>, path: String) throws -> Schema.AttributeType {
        let declaration = declared.declaration
        let name = declaration.name.text
        let conformances = index.conformances(of: name, inheritance: declaration.inheritanceClause)
        guard Self.isCodable(conformances) else {
            throw SchemaError(.invalidSource, "\(declared.location): enum \(name) (used by \(path)) is not Codable, so Tandem cannot store it; add `Codable`",
                              location: declared.location)
        }
        try collectAllowances(declaration.leadingTrivia, path: path, file: declared.file, node: declaration)
        let elements = declaration.memberBlock.members
            .compactMap { $0.decl.as(EnumCaseDeclSyntax.self) }
            .flatMap { caseDeclaration in caseDeclaration.elements.map { (caseDeclaration, $0) } }
        let rawTypeName = declaration.inheritanceClause?.inheritedTypes.lazy
            .compactMap { TypeShape.plainName($0.type) }
            .first { TypeShape.scalars[$0] != nil || $0 == "Character" }
        guard let rawTypeName else {
            // Encoded by case name and payload labels: one JSON column.
            let shape = elements.map { _, element in
                element.name.text + (element.parameterClause.map { clause in
                    "(" + clause.parameters.map { ($0.firstName.map { "\($0.text): " } ?? "") + $0.type.trimmedDescription }.joined(separator: ", ") + ")"
                } ?? "")
            }.joined(separator: ", ")
            return .json(typeName: name, shape: "cases: " + shape)
        }
        guard let rawType = TypeShape.scalars[rawTypeName] else {
            throw SchemaError(.invalidSource, "\(declared.location): enum \(name) has raw type \(rawTypeName), which is not a storable scalar",
                              location: declared.location)
        }
        var cases: [Schema.Enumeration.Case] = []
        var previous: Int?
        for (caseDeclaration, element) in elements {
            let location = declared.file.location(of: element)
            let raw: String
            if let value = element.rawValue?.value {
                raw = try rawValue(value, type: rawType, location: location)
                previous = Int(raw)
            } else if rawType == .string {
                raw = element.name.text
            } else if let last = previous ?? (cases.isEmpty ? -1 : nil) {
                raw = rawType == .double || rawType == .float ? String(describing: Double(last + 1)) : String(last + 1)
                previous = last + 1
            } else {
                throw SchemaError(.invalidSource, "\(location): case \(element.name.text) of \(name) needs an explicit raw value", location: location)
            }
            cases.append(Schema.Enumeration.Case(name: element.name.text, rawValue: raw))
            locations["\(path).\(element.name.text)"] = location
            try collectAllowances(caseDeclaration.leadingTrivia, path: "\(path).\(element.name.text)", file: declared.file, node: caseDeclaration)
        }
        let isCaseIterable = conformances.contains("CaseIterable")
        return .enumeration(Schema.Enumeration(typeName: name, rawType: rawType, cases: isCaseIterable ? cases : nil))
    }

    /// A raw value literal as `String(describing: rawValue)` prints it.
    private func rawValue(_ expression: ExprSyntax, type: Schema.ScalarType, location: TandemSchema.SourceLocation) throws -> String {
        if let string = expression.as(StringLiteralExprSyntax.self), let value = string.representedLiteralValue {
            return value
        }
        var text = expression.trimmedDescription.replacingOccurrences(of: "_", with: "")
        var negative = false
        if text.hasPrefix("-") {
            negative = true
            text.removeFirst()
        }
        let integer: Int? = if text.hasPrefix("0x") { Int(text.dropFirst(2), radix: 16) }
            else if text.hasPrefix("0o") { Int(text.dropFirst(2), radix: 8) }
            else if text.hasPrefix("0b") { Int(text.dropFirst(2), radix: 2) }
            else { Int(text) }
        switch type {
        case .double, .float:
            guard let value = Double(text) ?? integer.map(Double.init) else { break }
            let signed = negative ? -value : value
            return type == .float ? String(describing: Float(signed)) : String(describing: signed)
        default:
            guard let value = integer else { break }
            return String(negative ? -value : value)
        }
        throw SchemaError(.invalidSource, "\(location): cannot read the raw value \(expression.trimmedDescription)", location: location)
    }

    // MARK: Structs

    /// `ShapeProbe` on syntax: a Codable struct with a synthesized `init(from:)` is a composite
    /// of its decoded stored properties, in declaration order, keyed by `CodingKeys`.
    private mutating func composite(_ declared: SourceIndex.Declared<StructDeclSyntax>, path: String, collections: Int) throws -> Schema.AttributeType {
        let declaration = declared.declaration
        let name = declaration.name.text
        let conformances = index.conformances(of: name, inheritance: declaration.inheritanceClause)
        guard Self.isCodable(conformances) else {
            throw SchemaError(.invalidSource, "\(declared.location): struct \(name) (used by \(path)) is not Codable, so Tandem cannot store it; add `Codable`",
                              location: declared.location)
        }
        try collectAllowances(declaration.leadingTrivia, path: path, file: declared.file, node: declaration)
        let members = declaration.memberBlock.members.map(\.decl)
        if members.contains(where: { $0.as(InitializerDeclSyntax.self)?.signature.parameterClause.parameters.first?.firstName.text == "from" }) {
            throw SchemaError(.invalidSource, "\(declared.location): struct \(name) (used by \(path)) has a hand-written init(from:), whose fields cannot be read from source; describe its storage in a --types file",
                              location: declared.location)
        }
        var keys: [String: String]?
        if let codingKeys = members.lazy.compactMap({ $0.as(EnumDeclSyntax.self) }).first(where: { $0.name.text == "CodingKeys" }) {
            var map: [String: String] = [:]
            for element in codingKeys.memberBlock.members.compactMap({ $0.decl.as(EnumCaseDeclSyntax.self) }).flatMap(\.elements) {
                map[element.name.text] = element.rawValue?.value.as(StringLiteralExprSyntax.self)?.representedLiteralValue ?? element.name.text
            }
            keys = map
        }
        var fields: [Schema.Field] = []
        for member in members {
            guard let variable = member.as(VariableDeclSyntax.self),
                  !variable.modifiers.contains(where: { ["static", "class", "lazy"].contains($0.name.text) }) else { continue }
            let isLet = variable.bindingSpecifier.tokenKind == .keyword(.let)
            let bindings = Array(variable.bindings)
            for (position, binding) in bindings.enumerated() {
                guard binding.accessorBlock.map({ Self.isObserversOnly($0) }) ?? true,
                      let identifier = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier else { continue }
                // A `let` with an initial value is not decoded by the synthesized init(from:).
                if isLet && binding.initializer != nil { continue }
                let propertyName = identifier.text.trimmingCharacters(in: CharacterSet(charactersIn: "`"))
                let key: String
                if let keys {
                    guard let mapped = keys[propertyName] else { continue }
                    key = mapped
                } else {
                    key = propertyName
                }
                let fieldPath = "\(path).\(key)"
                let location = declared.file.location(of: binding)
                guard let type = bindings[position...].lazy.compactMap(\.typeAnnotation).first?.type
                        ?? Self.literalType(of: binding.initializer?.value) else {
                    throw SchemaError(.invalidSource, "\(location): \(fieldPath) has no type annotation; write its type", location: location)
                }
                guard !fields.contains(where: { $0.name == key }) else { continue }
                locations[fieldPath] = location
                try collectAllowances(variable.leadingTrivia, path: fieldPath, file: declared.file, node: variable)
                let resolved = try resolve(type, path: fieldPath, file: declared.file, collections: collections, at: location)
                fields.append(Schema.Field(name: key, type: resolved.type, isOptional: resolved.isOptional))
            }
        }
        return .composite(Schema.Composite(typeName: name, fields: fields))
    }

    private static func isObserversOnly(_ block: AccessorBlockSyntax) -> Bool {
        guard case .accessors(let list) = block.accessors else { return false }
        return list.allSatisfy { [.keyword(.willSet), .keyword(.didSet)].contains($0.accessorSpecifier.tokenKind) }
    }
}

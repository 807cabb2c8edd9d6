import SwiftSyntax
import TandemSchema

/// Reads Swift type syntax: optionals, collections, and the name a running app gives a type
/// (`String(describing: [Int?].self)` is `Array<Optional<Int>>`).
enum TypeShape {
    /// `T?`, `T!` or `Optional<T>` → `T`, and whether `T` is itself optional.
    static func unwrapOptional(_ type: TypeSyntax) -> (wrapped: TypeSyntax, nested: Bool)? {
        let wrapped: TypeSyntax
        if let optional = type.as(OptionalTypeSyntax.self) {
            wrapped = optional.wrappedType
        } else if let implicit = type.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) {
            wrapped = implicit.wrappedType
        } else if let generic = genericArguments(type, named: "Optional"), generic.count == 1 {
            wrapped = generic[0]
        } else {
            return nil
        }
        return (wrapped, unwrapOptional(wrapped) != nil)
    }

    /// `[T]` or `Array<T>` → `T`.
    static func arrayElement(_ type: TypeSyntax) -> TypeSyntax? {
        if let array = type.as(ArrayTypeSyntax.self) { return array.element }
        if let arguments = genericArguments(type, named: "Array"), arguments.count == 1 { return arguments[0] }
        return nil
    }

    /// A collection stored as JSON: its runtime name and element (a dictionary's value).
    static func collection(_ type: TypeSyntax) -> (element: TypeSyntax, kind: String)? {
        if let element = arrayElement(type) { return (element, "Array") }
        if let dictionary = type.as(DictionaryTypeSyntax.self) { return (dictionary.value, "Dictionary") }
        if let arguments = genericArguments(type, named: "Dictionary"), arguments.count == 2 { return (arguments[1], "Dictionary") }
        if let arguments = genericArguments(type, named: "Set"), arguments.count == 1 { return (arguments[0], "Set") }
        return nil
    }

    /// The generic arguments of `Name<…>` (or `Swift.Name<…>`).
    static func genericArguments(_ type: TypeSyntax, named name: String) -> [TypeSyntax]? {
        let clause: GenericArgumentClauseSyntax?
        if let identifier = type.as(IdentifierTypeSyntax.self), identifier.name.text == name {
            clause = identifier.genericArgumentClause
        } else if let member = type.as(MemberTypeSyntax.self), member.name.text == name {
            clause = member.genericArgumentClause
        } else {
            return nil
        }
        return clause?.arguments.compactMap { $0.argument.as(TypeSyntax.self) }
    }

    /// The simple name of a non-generic named type, `nil` for anything else.
    static func plainName(_ type: TypeSyntax) -> String? {
        if let identifier = type.as(IdentifierTypeSyntax.self), identifier.genericArgumentClause == nil { return identifier.name.unescapedText }
        if let member = type.as(MemberTypeSyntax.self), member.genericArgumentClause == nil { return member.name.unescapedText }
        return nil
    }

    /// A non-generic named type as written, `Outer.Inner` or `Name`; `nil` for anything else.
    static func dottedName(_ type: TypeSyntax) -> String? {
        if let identifier = type.as(IdentifierTypeSyntax.self), identifier.genericArgumentClause == nil { return identifier.name.unescapedText }
        if let member = type.as(MemberTypeSyntax.self), member.genericArgumentClause == nil,
            let base = dottedName(member.baseType)
        {
            return base + "." + member.name.unescapedText
        }
        return nil
    }

    /// The name `String(describing:)` prints for the type.
    static func runtimeName(_ type: TypeSyntax) -> String {
        if let (wrapped, _) = unwrapOptional(type) { return "Optional<\(runtimeName(wrapped))>" }
        if let array = type.as(ArrayTypeSyntax.self) { return "Array<\(runtimeName(array.element))>" }
        if let dictionary = type.as(DictionaryTypeSyntax.self) {
            return "Dictionary<\(runtimeName(dictionary.key)), \(runtimeName(dictionary.value))>"
        }
        let name: String
        let clause: GenericArgumentClauseSyntax?
        if let identifier = type.as(IdentifierTypeSyntax.self) {
            name = identifier.name.text
            clause = identifier.genericArgumentClause
        } else if let member = type.as(MemberTypeSyntax.self) {
            name = member.name.text
            clause = member.genericArgumentClause
        } else {
            return type.trimmedDescription
        }
        guard let clause else { return name }
        let arguments = clause.arguments.compactMap { $0.argument.as(TypeSyntax.self) }.map(runtimeName)
        return "\(name)<\(arguments.joined(separator: ", "))>"
    }

    /// The scalar types Tandem stores in one column, by Swift name.
    static let scalars: [String: Schema.ScalarType] = [
        "Int": .int, "Int8": .int8, "Int16": .int16, "Int32": .int32, "Int64": .int64,
        "UInt": .uint, "UInt8": .uint8, "UInt16": .uint16, "UInt32": .uint32, "UInt64": .uint64,
        "Bool": .bool, "Double": .double, "Float": .float, "String": .string, "Date": .date,
        "UUID": .uuid, "Data": .data, "URL": .url, "Decimal": .decimal,
    ]
}

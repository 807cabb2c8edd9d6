public import SwiftSyntax

/// Why a declared type can never be stored, judged from its spelling alone.
///
/// The check looks through optionals (`T?`, `T!`, `Optional<T>`), arrays, inline arrays,
/// sets, dictionaries, parentheses and type attributes such as `@Sendable`. Anything the
/// syntax cannot settle (a plain protocol name used as an existential, a type that is not
/// `Codable`) is left to the runtime, which checks it when the container is created.
public enum UnstorableTypeKind: Equatable, Sendable {
    /// `(Int) -> Void`, `@Sendable () async -> Void`.
    case function
    /// `(Int, String)`, `()`.
    case tuple
    /// `Any`, `AnyObject`, `any P`, `P & Q`.
    case existential
    /// `some P`.
    case opaque
    /// `Int.Type`, `P.Protocol`.
    case metatype

    /// The advice that ends the diagnostic.
    public var hint: String {
        switch self {
        case .function:
            return "closures cannot be saved; mark it @Transient"
        case .tuple:
            return "store a Codable struct instead of a tuple, or mark it @Transient"
        case .existential, .opaque:
            return "store a concrete Codable type, or mark it @Transient"
        case .metatype:
            return "metatypes cannot be saved; mark it @Transient"
        }
    }

    /// Generic types whose arguments are looked into: the standard containers.
    private static let transparentGenerics: Set<String> = [
        "Optional", "ImplicitlyUnwrappedOptional", "Array", "ContiguousArray", "Set", "Dictionary",
    ]

    /// The first reason, depth first, why `type` cannot be stored; `nil` when the spelling
    /// gives no reason.
    public static func of(_ type: TypeSyntax) -> UnstorableTypeKind? {
        if let attributed = type.as(AttributedTypeSyntax.self) {
            return of(attributed.baseType)
        }
        if type.is(FunctionTypeSyntax.self) {
            return .function
        }
        if let tuple = type.as(TupleTypeSyntax.self) {
            // `(T)` is only parentheses around `T`.
            if tuple.elements.count == 1, let only = tuple.elements.first,
                only.firstName == nil, only.ellipsis == nil
            {
                return of(only.type)
            }
            return .tuple
        }
        if type.is(MetatypeTypeSyntax.self) {
            return .metatype
        }
        if let someOrAny = type.as(SomeOrAnyTypeSyntax.self) {
            return someOrAny.someOrAnySpecifier.tokenKind == .keyword(.some) ? .opaque : .existential
        }
        if type.is(CompositionTypeSyntax.self) {
            return .existential
        }
        if let optional = type.as(OptionalTypeSyntax.self) {
            return of(optional.wrappedType)
        }
        if let optional = type.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) {
            return of(optional.wrappedType)
        }
        if let array = type.as(ArrayTypeSyntax.self) {
            return of(array.element)
        }
        if let inlineArray = type.as(InlineArrayTypeSyntax.self) {
            return of(inlineArray.element)
        }
        if let dictionary = type.as(DictionaryTypeSyntax.self) {
            return of(dictionary.key) ?? of(dictionary.value)
        }
        if let identifier = type.as(IdentifierTypeSyntax.self) {
            return named(identifier.name.text, arguments: identifier.genericArgumentClause)
        }
        if let member = type.as(MemberTypeSyntax.self),
            member.baseType.as(IdentifierTypeSyntax.self)?.name.text == "Swift"
        {
            return named(member.name.text, arguments: member.genericArgumentClause)
        }
        return nil
    }

    /// The verdict on a nominal type spelled `name<arguments>`.
    private static func named(_ name: String, arguments: GenericArgumentClauseSyntax?) -> UnstorableTypeKind? {
        if name == "Any" || name == "AnyObject" {
            return .existential
        }
        guard let arguments, transparentGenerics.contains(name) else {
            return nil
        }
        for argument in arguments.arguments {
            if let kind = of(argument) {
                return kind
            }
        }
        return nil
    }

    private static func of(_ argument: GenericArgumentSyntax) -> UnstorableTypeKind? {
        argument.argument.as(TypeSyntax.self).flatMap { of($0) }
    }
}

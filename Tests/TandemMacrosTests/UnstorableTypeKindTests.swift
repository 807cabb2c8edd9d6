import SwiftSyntax
import SwiftSyntaxBuilder
import TandemMacrosSupport
import Testing

/// The syntactic judgement of declared types: what can never be stored, and what is left
/// to the runtime.
@Suite struct UnstorableTypeKindTests {
    @Test(arguments: [
        ("(Int) -> Void", UnstorableTypeKind.function),
        ("@escaping @Sendable () -> Void", .function),
        ("ImplicitlyUnwrappedOptional<() -> Void>", .function),
        ("(() -> Void)!", .function),
        ("ContiguousArray<(Int) throws -> Int>", .function),
        ("()", .tuple),
        ("(a: Int, b: Int)", .tuple),
        ("Set<(Int, Int)>", .tuple),
        ("Dictionary<String, (Int, Int)>", .tuple),
        ("Swift.Any", .existential),
        ("[AnyObject]", .existential),
        ("Dictionary<any Hashable, Int>", .existential),
        ("Swift.Optional<any Codable>", .existential),
        ("[Codable & Sendable]", .existential),
        ("some Collection", .opaque),
        ("String.Type", .metatype),
        ("(any Codable).Type", .metatype),
        ("Codable.Protocol", .metatype),
        ("[Int.Type]?", .metatype),
    ])
    func recognisesTypesThatCanNeverBeStored(spelling: String, kind: UnstorableTypeKind) {
        #expect(UnstorableTypeKind.of(TypeSyntax(stringLiteral: spelling)) == kind)
    }

    @Test(arguments: [
        "String", "Int?", "Date!", "[String]", "[String: Int]", "(Int)", "((Double))?", "Set<UUID>",
        "Optional<Date>", "Swift.Int", "Schema.Status", "Array<[Data]>",
        // Not looked into: only the standard containers are transparent.
        "Box<() -> Void>",
    ])
    func leavesOtherTypesToTheRuntime(spelling: String) {
        #expect(UnstorableTypeKind.of(TypeSyntax(stringLiteral: spelling)) == nil)
    }
}

import Foundation
import Testing
import TandemSchema
import TandemSchemaExtract

/// Whatever the source text, extraction returns a schema or throws a `SchemaError` with a
/// location: never a crash, never a hang.
@Suite("Extraction on broken sources")
struct ExtractRobustnessTests {
    static let model = """
        import Foundation
        import Tandem

        struct People: Codable { var name: String; var age: Int?; var tags: [String] = [] }
        enum Priority: Int, Codable, CaseIterable { case low, normal = 5, high }
        enum Shape: Codable { case dot, circle(radius: Double) }
        typealias Money = Decimal

        @Model final class Todo {
            @Attribute(.unique) var code: String
            // tandem:allow ATTRIBUTE_ADDED_OPTIONAL fine
            var people: People
            var priority: Priority = .normal
            var shape: Shape = .dot
            var cost: Money = 0
            @Relationship(deleteRule: .cascade, inverse: \\Item.todo) var items: [Item] = []
            init(code: String, people: People) { self.code = code; self.people = people }
        }

        @Model final class Item { var name: String = ""; var todo: Todo?; init() {} }
        """

    /// Cases or stored properties inside `#if` depend on build flags the sources do not say:
    /// refused with the `#if`'s line, not silently dropped (a case left out renumbers the
    /// implicit raw values after it). Methods inside `#if` are fine.
    @Test(arguments: [
        ("enum Cond: Int, Codable { case base\n#if DEBUG\ncase debugOnly\n#endif\ncase last }", "var cond: Cond = .base", "enum Cond"),
        ("struct Box: Codable { var a: Int\n#if DEBUG\nvar b: Int\n#endif\n}", "var box: Box", "struct Box"),
        ("", "var title: String = \"\"\n#if DEBUG\nvar debugNote: String = \"\"\n#endif", "model Note"),
    ])
    func storedMembersInsideIfConfigAreRefusedWithTheirLine(declaration: String, member: String, named: String) throws {
        let source = "import Tandem\n\(declaration)\n@Model final class Note {\n\(member)\ninit() {}\n}\n"
        #expect {
            try extract(source)
        } throws: { error in
            let message = (error as? SchemaError)?.message ?? ""
            return message.contains(named) && message.contains("inside #if") && message.contains("Models.swift:")
        }
        let methods = "import Tandem\nenum Cond: Int, Codable { case a, b\n#if DEBUG\nfunc debug() {}\n#endif\n}\n@Model final class Note { var cond: Cond = .a\ninit() {} }\n"
        #expect(try extract(methods).schema.entities.count == 1)
    }

    @Test func theUnmutatedModelExtracts() throws {
        let extracted = try SchemaExtractor().extract([SourceText(path: "M.swift", text: Self.model)])
        #expect(extracted.schema.entities.map(\.name) == ["Todo", "Item"])
    }

    @Test func mutatedSourcesYieldASchemaOrALocatedError() {
        let bytes = Array(Self.model.utf8)
        let tokens = ["{", "}", "(", ")", ":", "?", "[", "]", "var ", "let ", "@Model ", "enum ", "struct ", "= ", ",", "\\", "\"", "//", "Codable", "Todo", "People?"]
        var generator = SplitMix(seed: 7)
        for _ in 0..<300 {
            var text = bytes
            for _ in 0..<Int(generator.next() % 4 + 1) {
                let index = Int(generator.next() % UInt64(text.count))
                switch generator.next() % 3 {
                case 0: text.removeSubrange(index..<min(text.count, index + Int(generator.next() % 8) + 1))
                default: text.insert(contentsOf: Array(tokens[Int(generator.next() % UInt64(tokens.count))].utf8), at: index)
                }
            }
            let source = String(decoding: text, as: UTF8.self)
            do {
                _ = try SchemaExtractor().extract([SourceText(path: "M.swift", text: source)])
            } catch let error as SchemaError {
                #expect(error.location != nil || error.code == .invalidSource, "\(error.message)")
                #expect(!error.message.isEmpty)
            } catch {
                Issue.record("unexpected error \(error) for:\n\(source)")
            }
        }
    }
}

/// A small deterministic random number generator for reproducible mutations.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

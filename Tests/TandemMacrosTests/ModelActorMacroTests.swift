import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacrosGenericTestSupport
import TandemMacrosSupport
import Testing

/// `@ModelActor`: the container, the actor's own context, and the conformance.
@Suite struct ModelActorMacroTests {
    @Test func addsContainerContextAndInitializerToActor() {
        assertExpansion(
            """
            @ModelActor actor Importer {
                func run() {}
            }
            """,
            expandedSource: """
                actor Importer {
                    func run() {}

                    public nonisolated let modelContainer: Tandem.ModelContainer

                    public let modelContext: Tandem.ModelContext

                    public init(modelContainer: Tandem.ModelContainer) {
                        self.modelContainer = modelContainer
                        self.modelContext = Tandem.ModelContext(modelContainer)
                    }
                }

                extension Importer: Tandem.ModelActor {}
                """)
    }

    @Test func addsNoExtensionWhenActorAlreadyConforms() {
        var macros = allMacros
        macros["ModelActor"] = MacroSpec(type: ModelActorMacro.self, conformances: [])
        assertExpansion(
            "@ModelActor actor Importer: ModelActor {\n}",
            expandedSource: """
                actor Importer: ModelActor {

                    public nonisolated let modelContainer: Tandem.ModelContainer

                    public let modelContext: Tandem.ModelContext

                    public init(modelContainer: Tandem.ModelContainer) {
                        self.modelContainer = modelContainer
                        self.modelContext = Tandem.ModelContext(modelContainer)
                    }
                }
                """,
            macros: macros)
    }

    @Test(arguments: ["class", "struct", "enum"])
    func rejectsNonActor(keyword: String) {
        assertExpansion(
            "@ModelActor \(keyword) Importer {\n}",
            expandedSource: "\(keyword) Importer {\n}",
            diagnostics: [
                DiagnosticSpec(message: "@ModelActor can only be applied to an actor", line: 1, column: 1)
            ])
    }
}

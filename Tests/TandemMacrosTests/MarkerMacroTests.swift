import TandemMacrosSupport
import Testing

/// `@Attribute` and `@Transient` are markers that `@Model` reads; on their own they add nothing.
@Suite struct MarkerMacroTests {
    @Test(arguments: [
        (source: "@Attribute(.unique, originalName: \"old\") var code: String", expanded: "var code: String"),
        (source: "@Attribute var code: String", expanded: "var code: String"),
        (source: "@Transient var scratch = 0", expanded: "var scratch = 0"),
    ])
    func markerExpandsToNothing(source: String, expanded: String) {
        assertExpansion(source, expandedSource: expanded)
    }
}

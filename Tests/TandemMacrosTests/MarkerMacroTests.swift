import TandemMacrosSupport
import Testing

/// `@Attribute` and `@Transient` are markers that `@Model` reads; on their own they add nothing.
@Suite struct MarkerMacroTests {
    @Test(arguments: [
        "@Attribute(.unique, originalName: \"old\") var code: String",
        "@Attribute var code: String",
        "@Transient var scratch = 0",
    ])
    func markerExpandsToNothing(source: String) {
        let property = source.drop { $0 != " " }.dropFirst()
        let declaration = property.hasPrefix("var") ? property : property.drop { $0 != "v" }
        assertExpansion(source, expandedSource: String(declaration))
    }
}

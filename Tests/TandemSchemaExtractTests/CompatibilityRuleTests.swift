import Testing
import TandemSchema
import TandemSchemaExtract
import TandemSchemaTestSupport

@Suite("Compatibility rules, one v1/v2 source pair each")
struct CompatibilityRuleTests {
    @Test(arguments: ruleCases)
    func changeIsReportedWithItsRuleVerdictAndPath(_ rule: RuleCase) throws {
        let findings = try check(rule.v1, rule.v2)
        let matching = findings.filter { $0.rule == rule.rule && $0.path == rule.path }
        #expect(matching.count == 1, "findings: \(findings.map { "\($0.rule) \($0.path) \($0.verdict)" })")
        #expect(matching.first?.verdict == rule.verdict)
        #expect(matching.first.map { !$0.message.isEmpty && !$0.hint.isEmpty } ?? false)
    }

    @Test func everyRuleOfTheCatalogHasACase() {
        let covered = Set(ruleCases.map(\.rule))
        let missing = CompatibilityRule.all.map(\.id).filter { !covered.contains($0) }
        #expect(missing.isEmpty, "rules without a v1/v2 test: \(missing)")
    }

    @Test func anUnchangedSchemaHasNoFindings() throws {
        let source = note(
            base + "\nvar folder: Folder?\nvar priority: Priority = .low\nvar mood: Mood = .ok\nvar links: [Link] = []",
            """
            @Model final class Folder { var notes: [Note] = [] }
            enum Priority: Int, Codable, CaseIterable { case low, high }
            enum Mood: String, Codable { case ok, sad }
            struct Link: Codable { var url: URL }
            """)
        #expect(try check(source, source).isEmpty)
    }

    @Test func renamingACollectionsElementStructIsSafeAndReorderingEnumCasesIsNoChange() throws {
        let v1 = note(
            "var links: [Link] = []\nvar shape: Shape = .dot",
            "struct Link: Codable { var url: URL }\nenum Shape: Codable { case dot, circle(radius: Double) }")
        let v2 = note(
            "var links: [Hyperlink] = []\nvar shape: Shape = .dot",
            "struct Hyperlink: Codable { var url: URL }\nenum Shape: Codable { case circle(radius:Double), dot }")
        let findings = try check(v1, v2)
        #expect(findings.map(\.rule) == ["COMPOSITE_TYPE_RENAMED"])
        #expect(findings.first?.verdict == .safe)
    }

    @Test func aRelationshipToARenamedModelKeepsItsDestination() throws {
        let v1 = note(base + "\nvar folder: Folder?", "@Model final class Folder { var notes: [Note] = [] }")
        let v2 = note(base + "\nvar folder: Directory?", "@Model(originalName: \"Folder\") final class Directory { var notes: [Note] = [] }")
        let findings = try check(v1, v2)
        #expect(findings.map(\.rule) == ["ENTITY_RENAMED"], "\(findings.map { "\($0.rule) \($0.path)" })")
        #expect(findings.first?.verdict == .safe)
        // Stored and on the wire, both versions are one schema.
        #expect(try extract(v1).schema.stored == extract(v2).schema.stored)
        #expect(try extract(v2).schema.onTheWire.entities.map(\.name).sorted() == ["Folder", "Note"])
        #expect(try extract(v2).schema.entity(named: "Note")?.relationship(named: "folder")?.destination == "Directory")
    }

    @Test func anOriginalNameThatIsNotALiteralIsAnErrorNamingTheLine() {
        let source = note(base, "let first = \"Folder\"\n@Model(originalName: first) final class Directory { var name: String = \"\" }")
        #expect { try extract(source) } throws: { ($0 as? SchemaError)?.message.contains("originalName must be a plain string literal") == true }
    }

    @Test func aTypeDefinedOnlyOutsideTheSourcesIsAnErrorNamingTypeAndLine() {
        #expect { try extract(note("var money: Money"), path: "App/Note.swift") } throws: { error in
            let error = error as? SchemaError
            return error?.code == .invalidSource && error?.message.contains("App/Note.swift:4") == true
                && error?.message.contains("Money") == true && error?.location?.line == 4
        }
    }

    @Test func aTypeThatContainsItselfIsAnErrorNotACrash() {
        let source = note("var node: Node", "struct Node: Codable { var value: Int; var child: Box }\nstruct Box: Codable { var node: Node }")
        #expect { try extract(source) } throws: { ($0 as? SchemaError)?.message.contains("contains itself") == true }
    }
}

import Foundation
import Testing
@testable import Tandem
import TandemSchemaExtract

/// `tandem schema extract` must write exactly what `Schema([...])` computes at runtime.
@Suite("Schema extraction matches the runtime")
struct SchemaExtractionTests {
    /// The test models, by entity name (the versioned `Note`s are nested in enums and share a name).
    static let models: [String: any PersistentModel.Type] = Dictionary(
        uniqueKeysWithValues: ([
            Todo.self, Item.self, AllTypes.self, Student.self, Schedule.self,
            Category.self, Article.self, ArticleCollection.self, Tag.self, Shelf.self, Book.self, RingNode.self, PetOwner.self, Pet.self,
            LedgerEntry.self, CrashNote.self, Product.self, Story.self,
        ] as [any PersistentModel.Type]).map { ($0.entityName, $0) })

    /// The versioned `Note`s, each nested in its version's enum.
    static let versions: [String: any PersistentModel.Type] = [
        "V1": V1.Note.self, "V2": V2.Note.self, "V3Bad": V3Bad.Note.self, "V4Bad": V4Bad.Note.self, "V5": V5.Note.self,
    ]

    static func supportSources() throws -> [SourceText] {
        let support = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "Support")
        return try ["TestModels.swift", "RelationshipModels.swift", "JournalModels.swift", "ExtractionModels.swift"].map { name in
            let url = support.appending(path: name)
            return SourceText(path: "Support/\(name)", text: try String(contentsOf: url, encoding: .utf8))
        }
    }

    /// Each version of the versioned `Note` with every top-level test model.
    @Test(arguments: ["V1", "V2", "V3Bad", "V4Bad", "V5"])
    func extractedSchemaEqualsTheRuntimeSchemaOfTheTestModels(version: String) throws {
        let extracted = try SchemaExtractor(scope: version).extract(try Self.supportSources())
        let names = extracted.schema.entities.map(\.name)
        #expect(Set(names) == Set(Self.models.keys).union(["Note"]), "every test model is found, and only those")
        let runtime = try Schema(names.map { $0 == "Note" ? Self.versions[version]! : Self.models[$0]! })
        // The sources show what the runtime cannot (the cases of an enum that is not
        // CaseIterable, the shape of a JSON-stored type); everything else is equal.
        #expect(runtime.isVersion(of: extracted.schema))
        let expected = String(decoding: try extracted.schema.canonicalJSON(), as: UTF8.self)
        let actual = String(decoding: try runtime.fillingUnknowns(from: extracted.schema).canonicalJSON(), as: UTF8.self)
        #expect(actual == expected)
    }

    @Test func enumsThatAreNotCaseIterableListTheirCasesFromSourceOnly() throws {
        let extracted = try SchemaExtractor(scope: "V1").extract(try Self.supportSources())
        let fromSource = try #require(extracted.schema.entity(named: "Product")?.attribute(named: "grade"))
        #expect(
            fromSource.type
                == .enumeration(
                    Schema.Enumeration(
                        typeName: "Grade", rawType: .int,
                        cases: [.init(name: "one", rawValue: "0"), .init(name: "two", rawValue: "1"), .init(name: "three", rawValue: "7")])))
        let runtime = try Schema([Product.self])
        #expect(runtime.entities[0].attribute(named: "grade")?.type == .enumeration(Schema.Enumeration(typeName: "Grade", rawType: .int, cases: nil)))
        // One version: a store of these models syncs as the published (extracted) schema.
        let published = Schema(entities: [try #require(extracted.schema.entity(named: "Product"))])
        #expect(runtime.isVersion(of: published))
        // Not when anything the runtime knows differs.
        var other = published
        other.entities[0].attributes.removeAll { $0.name == "level" }
        #expect(!runtime.isVersion(of: other))
    }

    @Test func severalModelsWithOneNameNeedAScope() throws {
        #expect { try SchemaExtractor().extract(try Self.supportSources()) } throws: { error in
            let message = (error as? SchemaError)?.message ?? ""
            return message.contains("several models are named or stored as Note") && message.contains("--scope V1")
        }
    }

    @Test func collectionsRecordTheirElementShapeAtRuntimeAndFromSource() throws {
        let runtime = try Schema([AllTypes.self])
        let scores = try #require(runtime.entities[0].attribute(named: "scores"))
        #expect(scores.type == .collection(typeName: "Dictionary<String, Int>", element: .scalar(.int)))
    }

    @Test func enumsWithoutRawValuesCarryTheirDeclaredCasesFromSource() throws {
        let extracted = try SchemaExtractor(scope: "V1").extract(try Self.supportSources())
        let allTypes = try #require(extracted.schema.entity(named: "AllTypes"))
        #expect(allTypes.attribute(named: "shape")?.type == .json(typeName: "Shape", shape: "cases: circle(radius:Double), square(side:Double)"))
        #expect(extracted.locations["AllTypes.shape"] == SourceLocation(file: "Support/TestModels.swift", line: 95))
    }
}

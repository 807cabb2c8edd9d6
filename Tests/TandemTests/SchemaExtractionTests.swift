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

    /// JSON-stored enums carry their declared cases only when read from source.
    static func withoutSourceShapes(_ schema: Schema) -> Schema {
        func strip(_ type: Schema.AttributeType) -> Schema.AttributeType {
            switch type {
            case .json(let name, _): return .json(typeName: name)
            case .collection(let name, let element): return .collection(typeName: name, element: element.map(strip))
            case .composite(var composite):
                composite.fields = composite.fields.map {
                    var field = $0; field.type = strip(field.type); return field
                }
                return .composite(composite)
            default: return type
            }
        }
        var schema = schema
        for e in schema.entities.indices {
            for a in schema.entities[e].attributes.indices {
                schema.entities[e].attributes[a].type = strip(schema.entities[e].attributes[a].type)
            }
        }
        return schema
    }

    /// Each version of the versioned `Note` with every top-level test model.
    @Test(arguments: ["V1", "V2", "V3Bad", "V4Bad", "V5"])
    func extractedSchemaEqualsTheRuntimeSchemaOfTheTestModels(version: String) throws {
        let extracted = try SchemaExtractor(scope: version).extract(try Self.supportSources())
        let names = extracted.schema.entities.map(\.name)
        #expect(Set(names) == Set(Self.models.keys).union(["Note"]), "every test model is found, and only those")
        let runtime = try Schema(names.map { $0 == "Note" ? Self.versions[version]! : Self.models[$0]! })
        let expected = String(decoding: try runtime.canonicalJSON(), as: UTF8.self)
        let actual = String(decoding: try Self.withoutSourceShapes(extracted.schema).canonicalJSON(), as: UTF8.self)
        #expect(actual == expected)
    }

    @Test func severalModelsWithOneNameNeedAScope() throws {
        #expect { try SchemaExtractor().extract(try Self.supportSources()) } throws: { error in
            let message = (error as? SchemaError)?.message ?? ""
            return message.contains("several models are named Note") && message.contains("--scope V1")
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

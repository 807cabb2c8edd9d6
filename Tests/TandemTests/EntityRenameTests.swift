import Foundation
import Testing
@testable import Tandem
import TandemSchemaExtract

/// Version 1: a `Chore` with a `Helper` holding chores.
enum RenameV1 {
    @Model final class Chore {
        var title: String
        var helper: Helper?
        init(title: String) { self.title = title }
    }

    @Model final class Helper {
        var name: String
        @Relationship(inverse: \Chore.helper) var chores: [Chore] = []
        init(name: String) { self.name = name }
    }
}

/// Version 2: `Chore` renamed to `Errand`, declaring its first name.
enum RenameV2 {
    @Model(originalName: "Chore") final class Errand {
        var title: String
        var helper: Helper?
        init(title: String) { self.title = title }
    }

    @Model final class Helper {
        var name: String
        @Relationship(inverse: \Errand.helper) var chores: [Errand] = []
        init(name: String) { self.name = name }
    }
}

/// Version 2 without the declaration: a new entity to the store.
enum RenameUndeclared {
    @Model final class Errand {
        var title: String
        var helper: Helper?
        init(title: String) { self.title = title }
    }

    @Model final class Helper {
        var name: String
        @Relationship(inverse: \Errand.helper) var chores: [Errand] = []
        init(name: String) { self.name = name }
    }
}

/// Two models stored under one name.
enum RenameClash {
    @Model final class Chore { var title = "" }
    @Model(originalName: "Chore") final class Errand { var title = "" }
}

/// Two classes of one name, one of them renamed: the declared schema would name two
/// entities alike.
enum RenameClashA {
    @Model(originalName: "Memo") final class Note { var text = "" }
}

enum RenameClashB {
    @Model final class Note { var text = "" }
}

/// A model renamed with `@Model(originalName:)` is the same entity: its records keep their
/// table, URIs and journal name, and the declared schema names it by its class.
@Suite("Renamed models")
struct EntityRenameTests {
    /// A store of version 1 with one chore of one helper; its URI.
    func withV1Store(_ body: (URL, PersistentIdentifier) throws -> Void) throws {
        let dir = TemporaryDirectory()
        let url = dir.file()
        let id: PersistentIdentifier
        do {
            let container = try ModelContainer(for: RenameV1.Chore.self, RenameV1.Helper.self, configurations: ModelConfiguration(url: url, dataset: "home"))
            let context = ModelContext(container)
            let chore = RenameV1.Chore(title: "dishes")
            let helper = RenameV1.Helper(name: "sam")
            context.insert(chore)
            context.insert(helper)
            chore.helper = helper
            try context.save()
            id = chore.persistentModelID
        }
        try body(url, id)
    }

    @Test func aRenamedModelKeepsItsRecordsTheirURIsAndItsRelationships() throws {
        try withV1Store { url, id in
            #expect(id.uriRepresentation.absoluteString.hasPrefix("tandem://home/Chore/"))
            let container = try ModelContainer(for: RenameV2.Errand.self, RenameV2.Helper.self, configurations: ModelConfiguration(url: url))
            let context = ModelContext(container)
            let errands = try context.fetch(FetchDescriptor<RenameV2.Errand>())
            #expect(errands.map(\.title) == ["dishes"])
            #expect(errands.first?.persistentModelID == id, "a URI is an identity: it keeps the first name")
            #expect(errands.first?.helper?.name == "sam")
            let helper = try #require(try context.fetch(FetchDescriptor<RenameV2.Helper>()).first)
            #expect(helper.chores.map(\.title) == ["dishes"])
            #expect((context.model(for: id) as? RenameV2.Errand)?.title == "dishes")

            let added = RenameV2.Errand(title: "laundry")
            context.insert(added)
            added.helper = helper
            try context.save()
            #expect(added.persistentModelID.entityName == "Chore")
            #expect(try container.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM Chore") } == 2, "one table, under the first name")
            #expect(try container.read { db in try db.tableExists("Errand") } == false)

            // The journal names it by its first name; a filter may use either.
            for name in ["Errand", "Chore"] {
                var descriptor = HistoryDescriptor()
                descriptor.entityNames = [name]
                let changes = try container.fetchHistory(descriptor).flatMap(\.changes)
                #expect(changes.count >= 2 && changes.allSatisfy { $0.entityName == "Chore" }, "\(name): \(changes.map(\.entityName))")
            }
        }
    }

    @Test func theStoreKeepsTheFirstNameAndTheMetadataTheDeclaredSchema() throws {
        try withV1Store { url, _ in
            let container = try ModelContainer(for: RenameV2.Errand.self, RenameV2.Helper.self, configurations: ModelConfiguration(url: url))
            #expect(container.schema.entities.map(\.name) == ["Chore", "Helper"])
            #expect(container.schema.entity(named: "Helper")?.relationship(named: "chores")?.destination == "Chore")
            #expect(container.declaredSchema.entities.map(\.name) == ["Errand", "Helper"])
            #expect(container.declaredSchema.entity(named: "Errand")?.originalName == "Chore")
            #expect(container.declaredSchema.entity(named: "Helper")?.relationship(named: "chores")?.destination == "Errand")
            #expect(try Schema([RenameV2.Errand.self, RenameV2.Helper.self]) == container.declaredSchema)
            let stored = try container.read { db in try String.fetchOne(db, sql: "SELECT value FROM tandem_metadata WHERE key = 'schema'") }
            #expect(try Schema(canonicalJSON: Data(try #require(stored).utf8)) == container.declaredSchema)
            // Opened from its metadata alone (the CLI, the daemon): the same two forms.
            let reopened = try ModelContainer(contentsOf: url)
            #expect(reopened.schema == container.schema && reopened.declaredSchema == container.declaredSchema)
            // An app still on version 1 opens it too: one entity, stored the same.
            let old = try ModelContainer(for: RenameV1.Chore.self, RenameV1.Helper.self, configurations: ModelConfiguration(url: url))
            #expect(try ModelContext(old).fetchCount(FetchDescriptor<RenameV1.Chore>()) == 1)
        }
    }

    @Test func aRenameWithoutOriginalNameIsRefusedAndChangesNothing() throws {
        try withV1Store { url, _ in
            let before = try Data(contentsOf: url)
            #expect { try ModelContainer(for: RenameUndeclared.Errand.self, RenameUndeclared.Helper.self, configurations: ModelConfiguration(url: url)) } throws: {
                ($0 as? StoreError)?.code == .schemaMismatch
            }
            #expect(try Data(contentsOf: url) == before)
        }
    }

    @Test func theSourcesOfARenamedModelExtractToTheRuntimeSchema() throws {
        let source = SourceText(path: "EntityRenameTests.swift", text: try String(contentsOf: URL(filePath: #filePath), encoding: .utf8))
        let extracted = try SchemaExtractor(scope: "RenameV2").extract([source])
        let runtime = try Schema([RenameV2.Errand.self, RenameV2.Helper.self])
        #expect(String(decoding: try extracted.schema.canonicalJSON(), as: UTF8.self) == String(decoding: try runtime.canonicalJSON(), as: UTF8.self))
        let findings = Schema.compare(baseline: try SchemaExtractor(scope: "RenameV1").extract([source]).schema, candidate: extracted.schema)
        #expect(findings.map { "\($0.rule) \($0.verdict.rawValue)" } == ["ENTITY_RENAMED safe"])
    }

    @Test func twoModelsStoredUnderOneNameOrDeclaredUnderOneNameAreRefused() {
        for types in [[RenameClash.Chore.self, RenameClash.Errand.self], [RenameClashA.Note.self, RenameClashB.Note.self]] as [[any PersistentModel.Type]] {
            #expect { try ModelContainer(for: types, configurations: [ModelConfiguration(isStoredInMemoryOnly: true)]) } throws: {
                let error = $0 as? StoreError
                return error?.code == .invalidModel && error?.message.contains("both named or stored as") == true
            }
        }
    }

    @Test func renamingBackToTheFirstNameIsTheSameEntity() throws {
        try withV1Store { url, id in
            _ = try ModelContainer(for: RenameV2.Errand.self, RenameV2.Helper.self, configurations: ModelConfiguration(url: url))
            let back = try ModelContainer(for: RenameV1.Chore.self, RenameV1.Helper.self, configurations: ModelConfiguration(url: url))
            #expect(try ModelContext(back).fetch(FetchDescriptor<RenameV1.Chore>()).map(\.persistentModelID) == [id])
            #expect(back.declaredSchema == back.schema)
        }
    }

    @Test func aRecordOfARenamedModelIsDeletedByEitherName() throws {
        try withV1Store { url, id in
            let container = try ModelContainer(for: RenameV2.Errand.self, RenameV2.Helper.self, configurations: ModelConfiguration(url: url))
            #expect(try container.deleteRecord(entity: "Errand", id: id.uuid) == ["Chore": [id.uuid]])
            #expect(throws: StoreError.self) { try container.deleteRecord(entity: "Nothing", id: id.uuid) }
        }
    }
}

import Foundation
import Testing
@testable import Tandem

@Suite("Opening stores: migrations and bad files")
struct MigrationTests {
    func fileBytes(_ url: URL) throws -> Data { try Data(contentsOf: url) }

    /// Closes every connection by releasing the container before the caller reads the file.
    func withV1Store(_ body: (URL) throws -> Void) throws {
        let dir = TemporaryDirectory()
        let url = dir.file()
        do {
            let container = try ModelContainer(for: V1.Note.self, configurations: ModelConfiguration(url: url))
            let context = ModelContext(container)
            context.insert(V1.Note(title: "kept"))
            try context.save()
            _ = try container.writer.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
        }
        try body(url)
    }

    @Test func versionedNamespacesShareOneTableAndMigrateAutomatically() throws {
        try withV1Store { url in
            let container = try ModelContainer(for: V2.Note.self, configurations: ModelConfiguration(url: url))
            let notes = try ModelContext(container).fetch(FetchDescriptor<V2.Note>())
            #expect(notes.count == 1)
            let note = try #require(notes.first)
            #expect(note.heading == "kept", "renamed through originalName")
            #expect(note.body == nil, "new optional attribute")
            #expect(note.pinned == true, "new attribute filled with its default")
            #expect(note.people == People(name: "nobody", age: 0), "new composite filled with its default")
            let stored = try container.read { db in try String.fetchOne(db, sql: "SELECT value FROM tandem_metadata WHERE key = 'schema'") }
            #expect(try Schema(canonicalJSON: Data(try #require(stored).utf8)) == container.schema)
        }
    }

    /// A renamed column keeps each row's stamp of it: the sync's last writer wins compares
    /// it with pulled values, and an edit made before the rename must still win over older ones.
    @Test func aRenamedColumnKeepsItsStamps() throws {
        try withV1Store { url in
            let before = try ModelContainer(for: V1.Note.self, configurations: ModelConfiguration(url: url))
            try before.write(author: "app") { db in try db.execute(sql: "UPDATE Note SET title = 'edited'") }
            let stampsBefore = try #require(try before.read { db in try String.fetchOne(db, sql: ##"SELECT "#hlc" FROM Note"##) })
            let titleStamp = try #require(Self.stamps(stampsBefore)["title"], "the edit stamped the column: \(stampsBefore)")
            let container = try ModelContainer(for: V2.Note.self, configurations: ModelConfiguration(url: url))
            let after = try #require(try container.read { db in try String.fetchOne(db, sql: ##"SELECT "#hlc" FROM Note"##) })
            #expect(Self.stamps(after)["heading"] == titleStamp, "\(after)")
            #expect(Self.stamps(after)["title"] == nil)
        }
    }

    static func stamps(_ json: String) -> [String: String] {
        (try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: String]) ?? [:]
    }

    @Test func addingTheIndexedOptionCreatesTheIndexOnOpen() throws {
        try withV1Store { url in
            let container = try ModelContainer(for: V5.Note.self, configurations: ModelConfiguration(url: url))
            let indexes = try container.read { db in try db.indexes(on: "Note").map(\.name) }
            #expect(indexes.contains("Note.title.index"))
            #expect(try ModelContext(container).fetch(FetchDescriptor<V5.Note>()).map(\.title) == ["kept"])
        }
    }

    @Test func addingAnEntityCreatesItsTable() throws {
        try withV1Store { url in
            let container = try ModelContainer(for: V1.Note.self, Item.self, configurations: ModelConfiguration(url: url))
            let context = ModelContext(container)
            context.insert(Item(name: "new"))
            try context.save()
            #expect(try context.fetchCount(FetchDescriptor<Item>()) == 1)
            #expect(try context.fetchCount(FetchDescriptor<V1.Note>()) == 1)
        }
    }

    @Test func aTypeChangeIsRefusedAndTheFileIsUntouched() throws {
        try withV1Store { url in
            let before = try fileBytes(url)
            #expect {
                _ = try ModelContainer(for: V3Bad.Note.self, configurations: ModelConfiguration(url: url))
            } throws: { error in
                let error = error as? StoreError
                return error?.code == .schemaMismatch && error?.entity == "Note" && error?.attribute == "title"
                    && error?.message.contains("type changed from string to int") == true
            }
            #expect(try fileBytes(url) == before)
        }
    }

    @Test func aRemovedAttributeIsRefusedNamingIt() throws {
        try withV1Store { url in
            try ModelContainer(for: V2.Note.self, configurations: ModelConfiguration(url: url)).schema.entities.forEach { _ in }
            let before = try fileBytes(url)
            #expect {
                _ = try ModelContainer(for: V1.Note.self, configurations: ModelConfiguration(url: url))
            } throws: { error in
                let error = error as? StoreError
                return error?.code == .schemaMismatch && error?.message.contains("Note.heading: attribute was removed") == true
            }
            #expect(try fileBytes(url) == before)
        }
    }

    @Test func aReshapedCompositeIsRefused() throws {
        try withV1Store { url in
            _ = try ModelContainer(for: V2.Note.self, configurations: ModelConfiguration(url: url))
            #expect {
                _ = try ModelContainer(for: V4Bad.Note.self, configurations: ModelConfiguration(url: url))
            } throws: { error in
                (error as? StoreError)?.code == .schemaMismatch
            }
        }
    }

    @Test func aRemovedEntityIsRefused() throws {
        try withV1Store { url in
            #expect {
                _ = try ModelContainer(for: Item.self, configurations: ModelConfiguration(url: url))
            } throws: { error in
                (error as? StoreError)?.message.contains("Note: entity is in the store but not in the models") == true
            }
        }
    }

    @Test func aFileThatIsNotSQLiteIsACorruptFileErrorAndIsNotModified() throws {
        let dir = TemporaryDirectory()
        let url = dir.file()
        let garbage = Data((0..<4096).map { UInt8($0 % 251) })
        try garbage.write(to: url)
        #expect {
            _ = try ModelContainer(for: Todo.self, configurations: ModelConfiguration(url: url))
        } throws: { error in
            (error as? StoreError)?.code == .corruptFile
        }
        #expect(try fileBytes(url) == garbage)
    }

    @Test func aTruncatedStoreIsACorruptFileError() throws {
        try withV1Store { url in
            let bytes = try fileBytes(url)
            try bytes.prefix(bytes.count / 2 + 100).write(to: url)
            #expect {
                let container = try ModelContainer(for: V1.Note.self, configurations: ModelConfiguration(url: url))
                _ = try ModelContext(container).fetch(FetchDescriptor<V1.Note>())
            } throws: { error in
                [.corruptFile, .sqlite].contains((error as? StoreError)?.code)
            }
        }
    }

    @Test func aForeignSQLiteDatabaseIsRefusedAndLeftAlone() throws {
        let dir = TemporaryDirectory()
        let url = dir.file()
        do {
            let queue = try DatabaseQueue(path: url.path)
            try queue.write { db in try db.execute(sql: "CREATE TABLE people (name TEXT); INSERT INTO people VALUES ('x')") }
        }
        let before = try fileBytes(url)
        #expect {
            _ = try ModelContainer(for: Todo.self, configurations: ModelConfiguration(url: url))
        } throws: { error in
            (error as? StoreError)?.code == .foreignFile
        }
        #expect(try fileBytes(url) == before)
    }

    @Test func anUnstorablePropertyTypeIsAClearErrorAtContainerCreation() throws {
        #expect {
            _ = try ModelContainer(for: Unstorable.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        } throws: { error in
            let error = error as? StoreError
            return error?.code == .invalidModel && error?.entity == "Unstorable" && error?.attribute == "handle"
        }
    }

    @Test func aDifferentDatasetForAnExistingStoreIsRefused() throws {
        try withV1Store { url in
            #expect {
                _ = try ModelContainer(for: V1.Note.self, configurations: ModelConfiguration(url: url, dataset: "other"))
            } throws: { ($0 as? StoreError)?.message.contains("belongs to dataset 'default'") == true }
        }
    }

    @Test func reopeningWithTheSameModelsChangesNothing() throws {
        try withV1Store { url in
            let before = try fileBytes(url)
            do { _ = try ModelContainer(for: V1.Note.self, configurations: ModelConfiguration(url: url)) }
            let count = try DatabaseQueue(path: url.path).read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM Note") }
            #expect(count == 1)
            _ = before
        }
    }
}

/// A model with a property type no column can hold: a nested optional has two kinds of nil.
/// (Types that are not Codable at all are compile-time errors in the generated code.)
@Model final class Unstorable {
    var name: String = ""
    var handle: Int?? = nil
    init() {}
}

enum R1 {
    @Model final class Owner {
        var name: String
        init(name: String) { self.name = name }
    }
}

enum R2 {
    @Model final class Owner {
        var name: String
        var partner: Owner?
        init(name: String) { self.name = name }
    }
}

@Suite("Relationship migrations")
struct RelationshipMigrationTests {
    @Test func addingAToOneAddsItsForeignKeyColumnAndRemovingItIsRefused() throws {
        let dir = TemporaryDirectory()
        let url = dir.file()
        do {
            let container = try ModelContainer(for: R1.Owner.self, configurations: ModelConfiguration(url: url))
            let context = ModelContext(container)
            context.insert(R1.Owner(name: "a"))
            try context.save()
        }
        do {
            let container = try ModelContainer(for: R2.Owner.self, configurations: ModelConfiguration(url: url))
            let columns = try container.read { db in try db.columns(in: "Owner").map(\.name) }
            #expect(columns == ["#id", "name", "#hlc", "partner"])
            let context = ModelContext(container)
            let a = try #require(try context.fetch(FetchDescriptor<R2.Owner>()).first)
            #expect(a.partner == nil)
            a.partner = R2.Owner(name: "b")
            try context.save()
        }
        #expect {
            _ = try ModelContainer(for: R1.Owner.self, configurations: ModelConfiguration(url: url))
        } throws: { error in
            (error as? StoreError)?.code == .schemaMismatch && (error as? StoreError)?.message.contains("Owner.partner: relationship was removed") == true
        }
    }
}

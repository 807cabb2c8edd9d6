import Foundation
import Testing
@testable import Tandem

@Suite("Identity and URIs")
struct IdentityTests {
    @Test func uriIsStableAcrossReopenAndParsesBack() throws {
        let dir = TemporaryDirectory()
        let uri: URL
        do {
            let container = try ModelContainer(for: Todo.self, configurations: ModelConfiguration(url: dir.file(), dataset: "team-1"))
            let context = ModelContext(container)
            let todo = Todo(code: "A", title: "a", people: people("A", 1))
            context.insert(todo)
            try context.save()
            uri = todo.persistentModelID.uriRepresentation
            #expect(uri.absoluteString == "tandem://team-1/Todo/\(UUIDText.string(todo.persistentModelID.uuid))")
        }
        let container = try ModelContainer(for: Todo.self, configurations: ModelConfiguration(url: dir.file()))
        #expect(container.dataset == "team-1")
        let id = try PersistentIdentifier(uriRepresentation: uri)
        let context = ModelContext(container)
        let same = try #require(context.model(for: id) as? Todo)
        #expect(same.code == "A")
        #expect(same.persistentModelID == id)
        #expect(same.persistentModelID.uriRepresentation == uri)
    }

    @Test func identifierIsHashableCodableAndRoundTrips() throws {
        let id = PersistentIdentifier(dataset: "d", entityName: "Todo", uuid: UUID())
        let data = try JSONEncoder().encode(id)
        #expect(try JSONDecoder().decode(PersistentIdentifier.self, from: data) == id)
        #expect(Set([id, id]).count == 1)
    }

    @Test(arguments: [
        "http://d/Todo/1f0c5d0e-8a4b-4c55-9b43-3f6c1f7a2b10",
        "tandem://d/Todo",
        "tandem://d/Todo/not-a-uuid",
        "tandem://d/Todo/1f0c5d0e-8a4b-4c55-9b43-3f6c1f7a2b10/extra",
        "tandem:///Todo/1f0c5d0e-8a4b-4c55-9b43-3f6c1f7a2b10",
        "tandem://d/9Todo/1f0c5d0e-8a4b-4c55-9b43-3f6c1f7a2b10",
        "tandem://d/To-do/1f0c5d0e-8a4b-4c55-9b43-3f6c1f7a2b10",
        "tandem://d%20x/Todo/1f0c5d0e-8a4b-4c55-9b43-3f6c1f7a2b10",
    ])
    func malformedURIsAreTypedErrors(_ text: String) throws {
        let url = try #require(URL(string: text))
        #expect {
            _ = try PersistentIdentifier(uriRepresentation: url)
        } throws: { error in
            (error as? StoreError)?.code == .invalidIdentifier && (error as? StoreError)?.message.contains(text) == true
        }
    }

    @Test func modelForAnUnknownRecordIsNil() throws {
        let container = try memoryContainer(Todo.self)
        let context = ModelContext(container)
        #expect(context.model(for: PersistentIdentifier(dataset: container.dataset, entityName: "Todo", uuid: UUID())) == nil)
        #expect(context.model(for: PersistentIdentifier(dataset: "other", entityName: "Todo", uuid: UUID())) == nil)
        #expect(context.model(for: PersistentIdentifier(dataset: container.dataset, entityName: "Nope", uuid: UUID())) == nil)
    }

    @Test func uuidIsAssignedAtCreationAndKeptByInsert() throws {
        let todo = Todo(code: "A", title: "a", people: people("A", 1))
        let before = todo.persistentModelID
        #expect(before.dataset == PersistentIdentifier.unassignedDataset)
        let container = try memoryContainer(Todo.self)
        let context = ModelContext(container)
        context.insert(todo)
        #expect(todo.persistentModelID.uuid == before.uuid)
        #expect(todo.persistentModelID.dataset == container.dataset)
        #expect(todo.id == todo.persistentModelID)
    }
}

@Suite("Random UUIDs")
struct RandomUUIDTests {
    @Test func generatedIdentifiersAreVersion4AndDistinct() {
        let ids = (0..<10_000).map { _ in RandomUUID.next() }
        #expect(Set(ids).count == ids.count)
        for id in ids.prefix(600) {
            let text = UUIDText.string(id)
            #expect(Array(text)[14] == "4", "version nibble of \(text)")
            #expect("89ab".contains(Array(text)[19]), "variant nibble of \(text)")
        }
    }
}

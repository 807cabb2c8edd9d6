import Foundation
import Testing
@testable import Tandem

@Suite("ModelContext")
struct ContextTests {
    @Test func nothingIsStoredUntilInsertAndSave() throws {
        let container = try memoryContainer(Todo.self)
        let context = ModelContext(container)
        let todo = Todo(code: "A", title: "a", people: people("A", 1))
        #expect(!context.hasChanges)
        context.insert(todo)
        #expect(context.hasChanges)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Todo>()) == 0)
        try context.save()
        #expect(!context.hasChanges)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Todo>()) == 1)
    }

    @Test func identityMapReturnsTheSameInstance() throws {
        let container = try memoryContainer(Todo.self)
        let context = ModelContext(container)
        let todo = Todo(code: "A", title: "a", people: people("A", 1))
        context.insert(todo)
        try context.save()
        let first = try context.fetch(FetchDescriptor<Todo>())
        let second = try context.fetch(FetchDescriptor<Todo>(predicate: #Predicate { $0.code == "A" }))
        #expect(first.first === todo)
        #expect(second.first === todo)
    }

    @Test func updateSavesOnlyAndExactlyTheChange() throws {
        let container = try memoryContainer(Todo.self)
        let context = ModelContext(container)
        let todo = Todo(code: "A", title: "a", people: people("A", 1))
        context.insert(todo)
        try context.save()
        todo.people.age = 42
        todo.tags.append("x")
        #expect(context.hasChanges)
        try context.save()
        let fresh = try #require(try ModelContext(container).fetch(FetchDescriptor<Todo>()).first)
        #expect(fresh.people == people("A", 42))
        #expect(fresh.tags == ["x"])
        #expect(fresh.title == "a")
    }

    @Test func aSecondContextSeesTheFirstOnesSavesOnItsNextFetch() throws {
        let container = try memoryContainer(Todo.self)
        let writer = ModelContext(container)
        let reader = ModelContext(container)
        let todo = Todo(code: "A", title: "old", people: people("A", 1))
        writer.insert(todo)
        try writer.save()
        let seen = try #require(try reader.fetch(FetchDescriptor<Todo>()).first)
        #expect(seen.title == "old")
        todo.title = "new"
        try writer.save()
        let again = try #require(try reader.fetch(FetchDescriptor<Todo>()).first)
        #expect(again === seen)
        #expect(again.title == "new")
    }

    @Test func unsavedChangesAreNotOverwrittenByAFetch() throws {
        let container = try memoryContainer(Todo.self)
        let context = ModelContext(container)
        let todo = Todo(code: "A", title: "saved", people: people("A", 1))
        context.insert(todo)
        try context.save()
        todo.title = "edited"
        _ = try context.fetch(FetchDescriptor<Todo>())
        #expect(todo.title == "edited")
    }

    @Test func rollbackDiscardsInsertsDeletesAndChanges() throws {
        let container = try memoryContainer(Todo.self)
        let context = ModelContext(container)
        let kept = Todo(code: "A", title: "saved", people: people("A", 1))
        context.insert(kept)
        try context.save()
        kept.title = "changed"
        let extra = Todo(code: "B", title: "new", people: people("B", 2))
        context.insert(extra)
        context.rollback()
        #expect(!context.hasChanges)
        #expect(kept.title == "saved")
        #expect(try context.fetch(FetchDescriptor<Todo>()).map(\.code) == ["A"])
        context.delete(kept)
        context.rollback()
        #expect(try context.fetch(FetchDescriptor<Todo>()).map(\.code) == ["A"])
    }

    @Test func deleteRemovesTheRowOnSave() throws {
        let container = try memoryContainer(Todo.self)
        let context = ModelContext(container)
        let todos = try seededTodos(context)
        context.delete(todos[1])
        #expect(try context.fetch(FetchDescriptor<Todo>()).count == 3, "pending delete is left out of fetches")
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Todo>()) == 4)
        try context.save()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Todo>()) == 3)
        #expect(todos[1].isDeleted)
    }

    @Test func fetchIncludesPendingInsertsAndChangesEvaluatedInMemory() throws {
        let container = try memoryContainer(Todo.self)
        let context = ModelContext(container)
        let todos = try seededTodos(context)
        todos[1].people.age = 50  // B now matches
        todos[0].people.age = 5  // A no longer matches
        context.insert(Todo(code: "E", title: "e", people: people("E", 60)))
        var descriptor = FetchDescriptor<Todo>(predicate: #Predicate { $0.people.age >= 18 }, sortBy: [SortDescriptor(\.code)])
        #expect(try context.fetch(descriptor).map(\.code) == ["B", "C", "D", "E"])
        #expect(try context.fetchCount(descriptor) == 4)
        descriptor.fetchLimit = 2
        #expect(try context.fetch(descriptor).map(\.code) == ["B", "C"])
        descriptor.includePendingChanges = false
        descriptor.fetchLimit = nil
        #expect(try context.fetch(descriptor).map(\.code) == ["A", "C", "D"], "stored rows only (A's stored age matches); changed objects keep their edits")
    }

    @Test func uniqueViolationThrowsWritesNothingAndKeepsChangesForRetry() throws {
        let container = try memoryContainer(Todo.self)
        let context = ModelContext(container)
        context.insert(Todo(code: "A", title: "first", people: people("A", 1)))
        try context.save()
        let ok = Todo(code: "B", title: "fine", people: people("B", 2))
        let clash = Todo(code: "A", title: "clash", people: people("C", 3))
        context.insert(ok)
        context.insert(clash)
        #expect {
            try context.save()
        } throws: { error in
            let error = error as? StoreError
            return error?.code == .uniqueViolation && error?.entity == "Todo" && error?.attribute == "code"
        }
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Todo>()) == 1, "the whole save rolled back")
        #expect(context.hasChanges)
        clash.code = "C"
        try context.save()
        #expect(try ModelContext(container).fetch(FetchDescriptor<Todo>(sortBy: [SortDescriptor(\.code)])).map(\.code) == ["A", "B", "C"])
    }

    @Test func insertingTheSameObjectTwiceIsHarmless() throws {
        let container = try memoryContainer(Todo.self)
        let context = ModelContext(container)
        let todo = Todo(code: "A", title: "a", people: people("A", 1))
        context.insert(todo)
        context.insert(todo)
        try context.save()
        context.insert(todo)
        #expect(!context.hasChanges)
        #expect(try context.fetchCount(FetchDescriptor<Todo>()) == 1)
    }

    @Test func insertingAnObjectOfAnotherContextIsAnErrorOnSave() throws {
        let container = try memoryContainer(Todo.self)
        let one = ModelContext(container), two = ModelContext(container)
        let todo = Todo(code: "A", title: "a", people: people("A", 1))
        one.insert(todo)
        two.insert(todo)
        #expect { try two.save() } throws: { ($0 as? StoreError)?.code == .misuse }
        try one.save()
    }

    @Test func fetchingATypeTheContainerDoesNotKnowIsAMisuseError() throws {
        let container = try memoryContainer(Todo.self)
        #expect { _ = try ModelContext(container).fetch(FetchDescriptor<Item>()) } throws: { ($0 as? StoreError)?.code == .misuse }
    }

    @Test func modelsAreObservable() throws {
        let container = try memoryContainer(Todo.self)
        let context = ModelContext(container)
        let todo = Todo(code: "A", title: "a", people: people("A", 1))
        context.insert(todo)
        let changed = Flag()
        withObservationTracking {
            _ = todo.title
        } onChange: {
            changed.set()
        }
        todo.title = "b"
        #expect(changed.value)
    }

    @Test func modelActorWorksOffTheCallersThread() async throws {
        let dir = TemporaryDirectory()
        let container = try ModelContainer(for: Todo.self, configurations: ModelConfiguration(url: dir.file()))
        let importer = Importer(modelContainer: container)
        try await importer.add(count: 50)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Todo>()) == 50)
        #expect(try await importer.count() == 50)
    }

    @Test func walModeLetsAReaderFetchWhileAWriterHoldsATransaction() throws {
        let dir = TemporaryDirectory()
        let container = try ModelContainer(for: Todo.self, configurations: ModelConfiguration(url: dir.file()))
        _ = try seededTodos(ModelContext(container))
        let mode = try container.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") }
        #expect(mode == "wal")
        try container.write { db in
            try db.execute(sql: #"UPDATE "Todo" SET title = 'in flight'"#)
            // A reader is not blocked by the open write transaction and sees the last commit.
            let titles = try ModelContext(container).fetch(FetchDescriptor<Todo>()).map(\.title)
            #expect(!titles.contains("in flight"))
        }
    }

    @Test func theWriterGetsTheConfiguredPageCacheAndReadersKeepSQLitesDefault() throws {
        let dir = TemporaryDirectory()
        var configuration = ModelConfiguration(url: dir.file())
        configuration.writerCacheSize = 8 << 20
        let container = try ModelContainer(for: Todo.self, configurations: configuration)
        #expect(try container.write { db in try Int.fetchOne(db, sql: "PRAGMA cache_size") } == -8192)
        #expect(try container.read { db in try Int.fetchOne(db, sql: "PRAGMA cache_size") } == -2000)
    }
}

@ModelActor actor Importer {
    func add(count: Int) throws {
        for i in 0..<count {
            modelContext.insert(Todo(code: "I\(i)", title: "imported", people: People(name: "x", age: i)))
        }
        try modelContext.save()
    }

    func count() throws -> Int {
        try modelContext.fetchCount(FetchDescriptor<Todo>())
    }
}

final class Flag: @unchecked Sendable {
    // @unchecked: guarded by `lock`.
    private let lock = NSLock()
    private var raised = false
    func set() { lock.withLock { raised = true } }
    var value: Bool { lock.withLock { raised } }
}

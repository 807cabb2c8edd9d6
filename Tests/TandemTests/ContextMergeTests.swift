import Foundation
import Observation
import Testing
@testable import Tandem

/// `ModelContext.merge`: changes committed elsewhere (another context, the sync engine)
/// reach the objects a context holds, through Observation.
@Suite("ModelContext merge")
struct ContextMergeTests {
    /// Whether reading `read` under observation sees a change when `change` runs.
    static func observes(_ read: @escaping () -> Void, when change: () -> Void) -> Bool {
        let fired = Flag()
        withObservationTracking(read) { fired.set() }
        change()
        return fired.value
    }

    @Test func anUpdateCommittedElsewhereReachesTheObjectAndItsObservers() throws {
        let container = try memoryContainer(Todo.self)
        let context = ModelContext(container)
        let todo = Todo(code: "A", title: "before", people: people("Ann", 1))
        context.insert(todo)
        try context.save()
        let token = try container.currentHistoryToken()
        let other = ModelContext(container)
        other.author = "sync"
        try #require(try other.fetch(FetchDescriptor<Todo>()).first).title = "after"
        try other.save()
        let transactions = try container.fetchHistory(HistoryDescriptor(after: token))
        var merged = 0
        #expect(Self.observes({ _ = todo.title }, when: { merged = context.merge(transactions) }))
        #expect(merged == 1)
        #expect(todo.title == "after")
        #expect(!context.hasChanges, "a merge is not a change to save")
    }

    @Test func aDeleteCommittedElsewhereMarksTheObjectDeleted() throws {
        let container = try memoryContainer(Todo.self)
        let context = ModelContext(container)
        let todo = Todo(code: "A", title: "a", people: people("Ann", 1))
        context.insert(todo)
        try context.save()
        let token = try container.currentHistoryToken()
        let other = ModelContext(container)
        other.delete(try #require(try other.fetch(FetchDescriptor<Todo>()).first))
        try other.save()
        #expect(context.merge(try container.fetchHistory(HistoryDescriptor(after: token))) == 1)
        #expect(todo.isDeleted)
        #expect(try context.fetch(FetchDescriptor<Todo>()).isEmpty)
        #expect(!context.hasChanges)
    }

    /// An object with unsaved changes keeps them; records the context holds no object of are
    /// left to the next fetch.
    @Test func unsavedChangesAreKeptAndUnheldRecordsSkipped() throws {
        let container = try memoryContainer(Todo.self)
        let context = ModelContext(container)
        let todo = Todo(code: "A", title: "a", people: people("Ann", 1))
        context.insert(todo)
        try context.save()
        todo.title = "mine, unsaved"
        let token = try container.currentHistoryToken()
        let other = ModelContext(container)
        try #require(try other.fetch(FetchDescriptor<Todo>()).first).title = "theirs"
        other.insert(Todo(code: "B", title: "new", people: people("Bob", 2)))
        try other.save()
        #expect(context.merge(try container.fetchHistory(HistoryDescriptor(after: token))) == 0)
        #expect(todo.title == "mine, unsaved" && context.hasChanges)
    }
}

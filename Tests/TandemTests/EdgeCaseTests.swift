import Foundation
import Testing
@testable import Tandem

/// Behaviours found in review: each of these failed before its fix.
@Suite("Edge cases")
struct EdgeCaseTests {
    @Test func insertDeleteInsertOfANewObjectSavesItOnce() throws {
        let container = try memoryContainer(Todo.self)
        let context = ModelContext(container)
        let todo = Todo(code: "A", title: "a", people: people("A", 1))
        context.insert(todo)
        context.delete(todo)
        context.insert(todo)
        try context.save()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Todo>()) == 1)
    }

    @Test func undoingADeleteKeepsEditsTracked() throws {
        let container = try memoryContainer(Todo.self)
        let context = ModelContext(container)
        let todo = Todo(code: "A", title: "old", people: people("A", 1))
        context.insert(todo)
        try context.save()
        todo.title = "new"
        context.delete(todo)
        context.insert(todo)
        try context.save()
        #expect(try ModelContext(container).fetch(FetchDescriptor<Todo>()).first?.title == "new")
        todo.title = "newer"
        try context.save()
        #expect(try ModelContext(container).fetch(FetchDescriptor<Todo>()).first?.title == "newer")
    }

    @Test func cascadeAndDenyCoverObjectsInsertedInTheSameSave() throws {
        let container = try ModelContainer(for: relationshipModels, configurations: [ModelConfiguration(isStoredInMemoryOnly: true)])
        let context = ModelContext(container)
        let collection = ArticleCollection(name: "c")
        context.insert(collection)
        try context.save()
        let late = Article(title: "late")
        late.collection = collection
        context.delete(collection)
        try context.save()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Article>()) == 0, "cascade reached the new article")
        #expect(late.isDeleted)

        let shelves = try ModelContainer(for: Shelf.self, Book.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let shelfContext = ModelContext(shelves)
        let shelf = Shelf(name: "s")
        shelfContext.insert(shelf)
        try shelfContext.save()
        let book = Book(title: "b")
        book.shelf = shelf
        shelfContext.delete(shelf)
        #expect { try shelfContext.save() } throws: { ($0 as? StoreError)?.code == .constraintViolation }
        #expect(try ModelContext(shelves).fetchCount(FetchDescriptor<Shelf>()) == 1)
    }

    @Test func negatingAComparisonAcrossANilToOneFollowsSwift() throws {
        let container = try ModelContainer(for: relationshipModels, configurations: [ModelConfiguration(isStoredInMemoryOnly: true)])
        let context = ModelContext(container)
        let tech = Category(name: "tech")
        context.insert(tech)
        let a = Article(title: "a"), b = Article(title: "b")
        context.insert(a)
        context.insert(b)
        a.category = tech
        try context.save()
        let notTech = try ModelContext(container).fetch(FetchDescriptor<Article>(predicate: #Predicate { !($0.category?.name == "tech") })).map(\.title)
        #expect(notTech == ["b"], "nil == \"tech\" is false, so its negation is true")
    }

    @Test func containsOnACapturedListFollowsSwiftForNil() throws {
        let container = try memoryContainer(Schedule.self)
        let context = ModelContext(container)
        let named = Schedule(name: "named"), anonymous = Schedule(name: "anonymous")
        named.nickname = "x"
        context.insert(named)
        context.insert(anonymous)
        try context.save()
        let banned: [String?] = ["x"]
        #expect(try ModelContext(container).fetch(FetchDescriptor<Schedule>(predicate: #Predicate { !banned.contains($0.nickname) })).map(\.name) == ["anonymous"])
        let nilOrX: [String?] = [nil, "x"]
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Schedule>(predicate: #Predicate { nilOrX.contains($0.nickname) })) == 2)
    }

    @Test func containsOnCollectionsOfDatesAndUUIDsMatches() throws {
        let container = try memoryContainer(Schedule.self)
        let context = ModelContext(container)
        let day = Date(timeIntervalSince1970: 86_400 * 365)
        let id = UUID()
        let schedule = Schedule(name: "s")
        schedule.dates = [day]
        schedule.ids = [id]
        context.insert(schedule)
        try context.save()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Schedule>(predicate: #Predicate { $0.dates.contains(day) })) == 1)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Schedule>(predicate: #Predicate { $0.ids.contains(id) })) == 1)
    }

    @Test func orderingDecimalsInSQLIsRefusedNotWrong() throws {
        let container = try memoryContainer(Schedule.self)
        let ten = Decimal(10)
        #expect {
            _ = try ModelContext(container).fetch(FetchDescriptor<Schedule>(predicate: #Predicate { $0.price > ten }))
        } throws: { ($0 as? StoreError)?.code == .unsupportedPredicate }
        #expect {
            _ = try ModelContext(container).fetch(FetchDescriptor<Schedule>(sortBy: [SortDescriptor(\.price)]))
        } throws: { ($0 as? StoreError)?.code == .unsupportedPredicate }
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Schedule>(predicate: #Predicate { $0.price == ten })) == 0)
    }

    @Test func aRawSQLFilterKeepsChangedObjectsThatMatchTheirStoredRow() throws {
        let container = try memoryContainer(Todo.self)
        let context = ModelContext(container)
        let todos = try seededTodos(context)
        todos[0].title = "edited"
        let found = try context.fetch(FetchDescriptor<Todo>(sqlFilter: #""code" = 'A'"#))
        #expect(found.map(\.code) == ["A"])
        #expect(found.first === todos[0])
    }

    @Test func pendingObjectsSortLikeStoredRows() throws {
        let container = try memoryContainer(Item.self)
        let context = ModelContext(container)
        context.insert(Item(name: "B"))
        context.insert(Item(name: "a"))
        try context.save()
        let stored = try context.fetch(FetchDescriptor<Item>(sortBy: [SortDescriptor(\.name)])).map(\.name)
        context.insert(Item(name: "C"))
        let merged = try context.fetch(FetchDescriptor<Item>(sortBy: [SortDescriptor(\.name)])).map(\.name)
        #expect(stored == ["B", "a"], "BINARY collation")
        #expect(merged == ["B", "C", "a"], "the unsaved object sorts by the same rule")
    }

    @Test func replacingAnUnloadedToManyDetachesTheOldMembers() throws {
        let container = try ModelContainer(for: relationshipModels, configurations: [ModelConfiguration(isStoredInMemoryOnly: true)])
        do {
            let context = ModelContext(container)
            let tech = Category(name: "tech")
            context.insert(tech)
            tech.articles = [Article(title: "a"), Article(title: "b")]
            try context.save()
        }
        let context = ModelContext(container)
        let tech = try #require(try context.fetch(FetchDescriptor<Category>()).first)
        tech.articles = [Article(title: "c")]
        try context.save()
        let fresh = ModelContext(container)
        let reloaded = try #require(try fresh.fetch(FetchDescriptor<Category>()).first)
        #expect(reloaded.articles.map(\.title) == ["c"])
        #expect(try fresh.fetchCount(FetchDescriptor<Article>(predicate: #Predicate { $0.category == nil })) == 2)
    }

    @Test func misuseStaysAnErrorUntilRollback() throws {
        let container = try ModelContainer(for: relationshipModels, configurations: [ModelConfiguration(isStoredInMemoryOnly: true)])
        let one = ModelContext(container), two = ModelContext(container)
        let tech = Category(name: "tech")
        one.insert(tech)
        let article = Article(title: "a")
        two.insert(article)
        article.category = tech
        #expect(throws: StoreError.self) { try two.save() }
        #expect(throws: StoreError.self) { try two.save() }
        two.rollback()
        try two.save()
    }
}

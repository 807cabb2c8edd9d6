import Foundation
import Testing
@testable import Tandem

/// Every `#Predicate` construct the store compiles to SQL, checked against a small dataset.
/// Each fetch runs in a fresh context, so results come from SQLite, not memory.
@Suite("Predicates compile to SQL")
struct PredicateTests {
    let container: ModelContainer

    init() throws {
        container = try memoryContainer(Todo.self)
        _ = try seededTodos(ModelContext(container))
    }

    func codes(_ predicate: Predicate<Todo>) throws -> [String] {
        try ModelContext(container).fetch(FetchDescriptor(predicate: predicate, sortBy: [SortDescriptor(\.code)])).map(\.code)
    }

    @Test func comparisonsOnScalars() throws {
        #expect(try codes(#Predicate { $0.title == "Buy milk" }) == ["A"])
        #expect(try codes(#Predicate { $0.title != "Buy milk" }) == ["B", "C", "D"])
        #expect(try codes(#Predicate { $0.code < "C" }) == ["A", "B"])
        #expect(try codes(#Predicate { $0.code >= "C" }) == ["C", "D"])
        #expect(try codes(#Predicate { $0.done }) == ["C"])
        #expect(try codes(#Predicate { !$0.done }) == ["A", "B", "D"])
    }

    @Test func logicalOperators() throws {
        #expect(try codes(#Predicate { $0.code == "A" || $0.code == "D" }) == ["A", "D"])
        #expect(try codes(#Predicate { $0.code != "A" && !($0.code == "D") }) == ["B", "C"])
    }

    @Test func arithmetic() throws {
        #expect(try codes(#Predicate { $0.people.age * 2 > 60 }) == ["A", "C"])
        #expect(try codes(#Predicate { $0.people.age + 1 == 18 }) == ["B"])
        #expect(try codes(#Predicate { $0.people.age % 2 == 1 }) == ["A", "B", "C"])
        #expect(try codes(#Predicate { $0.people.age / 10 == 4 }) == ["C"])
        #expect(try codes(#Predicate { ($0.weight ?? 0) / 2 > 40 }) == ["A"])
        #expect(try codes(#Predicate { -$0.people.age < -40 }) == ["C"])
    }

    @Test func optionals() throws {
        #expect(try codes(#Predicate { $0.weight == nil }) == ["B"])
        #expect(try codes(#Predicate { $0.weight != nil }) == ["A", "C", "D"])
        #expect(try codes(#Predicate { ($0.weight ?? 0) > 50 }) == ["A", "D"])
        #expect(try codes(#Predicate { $0.weight.flatMap { $0 > 50 } ?? false }) == ["A", "D"])
        #expect(try codes(#Predicate { $0.weight != 90 }) == ["B", "C", "D"], "nil != 90 is true, as in Swift")
        let missing: Double? = nil
        #expect(try codes(#Predicate { $0.weight == missing }) == ["B"])
    }

    @Test func stringFunctions() throws {
        #expect(try codes(#Predicate { $0.title.contains("i") }) == ["A", "B", "C", "D"])
        #expect(try codes(#Predicate { $0.title.contains("Bug") }) == ["C"])
        #expect(try codes(#Predicate { $0.title.contains("bug") }) == [], "contains is case-sensitive, as in Swift")
        #expect(try codes(#Predicate { $0.title.starts(with: "Wr") }) == ["B"])
        #expect(try codes(#Predicate { $0.title.localizedStandardContains("CAFE") }) == ["D"], "case and diacritic insensitive")
        #expect(try codes(#Predicate { $0.title.localizedStandardContains("bug") }) == ["C"])
    }

    @Test func collectionContainsValueIsIN() throws {
        let wanted = ["A", "C", "Z"]
        #expect(try codes(#Predicate { wanted.contains($0.code) }) == ["A", "C"])
        let none: [String] = []
        #expect(try codes(#Predicate { none.contains($0.code) }) == [])
    }

    @Test func keyPathsIntoComposites() throws {
        #expect(try codes(#Predicate { $0.people.age >= 18 }) == ["A", "C", "D"])
        #expect(try codes(#Predicate { $0.people.name == "Bob" }) == ["B"])
    }

    @Test func enumCasesCompareByRawValue() throws {
        // Foundation's #Predicate cannot spell `.high` or `Priority.high` inline: capture the case.
        let high = Priority.high
        #expect(try codes(#Predicate { $0.priority == high }) == ["A", "D"])
        let low = Priority.low
        #expect(try codes(#Predicate { $0.priority != low }) == ["A", "C", "D"])
        #expect(try codes(#Predicate { $0.people.age >= 18 && $0.priority == high }) == ["A", "D"])
    }

    @Test func containsOnJSONCollections() throws {
        #expect(try codes(#Predicate { $0.tags.contains("home") }) == ["A", "D"])
        #expect(try codes(#Predicate { $0.tags.contains { $0 == "work" } }) == ["B"])
        #expect(try codes(#Predicate { $0.tags.isEmpty }) == ["C"])
        #expect(try codes(#Predicate { $0.tags.count > 1 }) == ["A"])
        #expect(try codes(#Predicate { $0.tags.allSatisfy { $0 == "home" } }) == ["C", "D"])
    }

    @Test func dateComparisons() throws {
        let cutoff = Date(timeIntervalSince1970: 1_500)
        #expect(try codes(#Predicate { $0.timestamp > cutoff }) == ["A", "D"])
        #expect(try codes(#Predicate { $0.timestamp <= cutoff }) == ["B", "C"])
    }

    @Test func persistentModelIDEquality() throws {
        let context = ModelContext(container)
        let target = try #require(try context.fetch(FetchDescriptor<Todo>(predicate: #Predicate { $0.code == "C" })).first)
        let id = target.persistentModelID
        #expect(try codes(#Predicate { $0.persistentModelID == id }) == ["C"])
    }

    @Test func ternaryConditional() throws {
        #expect(try codes(#Predicate { ($0.done ? 1 : 0) == 1 }) == ["C"])
    }

    @Test func unsupportedConstructIsAnErrorNamingIt() throws {
        #expect {
            try codes(#Predicate { (18...40).contains($0.people.age) })
        } throws: { error in
            let error = error as? StoreError
            return error?.code == .unsupportedPredicate && error?.message.contains("RangeExpressionContains") == true
        }
        #expect {
            try codes(#Predicate { $0.tags.first == "home" })
        } throws: { error in
            (error as? StoreError)?.code == .unsupportedPredicate && (error as? StoreError)?.message.contains("predicates support count, isEmpty, contains") == true
        }
    }

    @Test func sortingByAttributesAndCompositeLeavesRunsInSQL() throws {
        let context = ModelContext(container)
        let byAge = try context.fetch(FetchDescriptor<Todo>(sortBy: [SortDescriptor(\.people.age, order: .reverse)])).map(\.code)
        #expect(byAge == ["C", "A", "D", "B"])
        let byTitle = try context.fetch(FetchDescriptor<Todo>(sortBy: [SortDescriptor(\.title)])).map(\.code)
        #expect(byTitle == ["A", "D", "C", "B"], "BINARY collation: uppercase before lowercase, é after ASCII")
        let byWeight = try context.fetch(FetchDescriptor<Todo>(sortBy: [SortDescriptor(\.weight)])).map(\.code)
        #expect(byWeight == ["B", "C", "D", "A"], "NULL sorts first, as nil does in Swift")
    }

    @Test func limitAndOffsetPageInSQL() throws {
        var descriptor = FetchDescriptor<Todo>(sortBy: [SortDescriptor(\.code)])
        descriptor.fetchLimit = 2
        descriptor.fetchOffset = 1
        #expect(try ModelContext(container).fetch(descriptor).map(\.code) == ["B", "C"])
        descriptor.fetchLimit = nil
        #expect(try ModelContext(container).fetch(descriptor).map(\.code) == ["B", "C", "D"])
        #expect(try ModelContext(container).fetchCount(descriptor) == 3)
    }

    @Test func fetchCountRunsInSQL() throws {
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Todo>(predicate: #Predicate { $0.people.age >= 18 })) == 3)
    }

    @Test func groupedCountsRunInSQL() throws {
        let byPriority = try ModelContext(container).fetchCount(FetchDescriptor<Todo>(), groupedBy: \.priority)
        #expect(byPriority == [.high: 2, .low: 1, .normal: 1])
        let byDone = try ModelContext(container).fetchCount(FetchDescriptor<Todo>(predicate: #Predicate { $0.people.age > 17 }), groupedBy: \.done)
        #expect(byDone == [false: 2, true: 1])
        let byWeight = try ModelContext(container).fetchCount(FetchDescriptor<Todo>(), groupedBy: \.weight)
        #expect(byWeight[nil] == 1)
        #expect(byWeight[90] == 1)
    }

    @Test func indexedAttributesGetAnIndexThatGroupedCountsUse() throws {
        let container = try memoryContainer(Item.self)
        let context = ModelContext(container)
        for i in 0..<20 { let item = Item(name: "i\(i)"); item.position = i % 3; context.insert(item) }
        try context.save()
        let indexes = try container.read { db in try db.indexes(on: "Item").map(\.name) }
        #expect(indexes.contains("Item.position.index"))
        let plan = try container.read { db in
            try Row.fetchAll(db, sql: #"EXPLAIN QUERY PLAN SELECT t."position", COUNT(*) FROM "Item" AS t GROUP BY t."position""#).map { $0["detail"] as String }
        }
        #expect(plan.contains { $0.contains("Item.position.index") }, "GROUP BY reads the index: \(plan)")
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Item>(), groupedBy: \.position) == [0: 7, 1: 7, 2: 6])
    }

    @Test func sqlFilterRunsRawSQLWithArguments() throws {
        let descriptor = FetchDescriptor<Todo>(sqlFilter: #""people.age" BETWEEN ? AND ?"#, arguments: [18, 40], sortBy: [SortDescriptor(\.code)])
        #expect(try ModelContext(container).fetch(descriptor).map(\.code) == ["A", "D"])
    }
}

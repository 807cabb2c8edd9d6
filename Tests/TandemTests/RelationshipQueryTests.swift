import Foundation
import Testing
@testable import Tandem

/// Counts the SELECT statements a connection runs (GRDB's trace), for "one query" assertions.
final class QueryCounter: @unchecked Sendable {
    // @unchecked: guarded by `lock`.
    private let lock = NSLock()
    private var statements: [String] = []
    func record(_ sql: String) { lock.withLock { statements.append(sql) } }
    var selects: [String] { lock.withLock { statements.filter { $0.uppercased().hasPrefix("SELECT") } } }
    func reset() { lock.withLock { statements = [] } }
}

@Suite("Queries across relationships")
struct RelationshipQueryTests {
    let container: ModelContainer
    let counter = QueryCounter()

    /// Collections c0…c4; article i of collection c has category (i % 3): tech, news, art.
    init() throws {
        // An in-memory store is one connection, so the trace sees every statement.
        container = try ModelContainer(for: relationshipModels, configurations: [ModelConfiguration(isStoredInMemoryOnly: true)])
        let context = ModelContext(container)
        let categories = ["tech", "news", "art"].map(Category.init(name:))
        for c in 0..<5 {
            let collection = ArticleCollection(name: "c\(c)")
            context.insert(collection)
            collection.articles = (0..<c).map { i in
                let article = Article(title: "c\(c)-a\(i)")
                article.category = categories[(c + i) % 3]
                return article
            }
        }
        try context.save()
        let counter = self.counter
        try container.write { db in db.trace { event in counter.record("\(event)") } }
    }

    func names(_ predicate: Predicate<ArticleCollection>) throws -> [String] {
        try ModelContext(container).fetch(FetchDescriptor(predicate: predicate, sortBy: [SortDescriptor(\.name)])).map(\.name)
    }

    @Test func toOneKeyPathsCompileToSQL() throws {
        let titles = try ModelContext(container).fetch(
            FetchDescriptor<Article>(
                predicate: #Predicate { $0.category?.name == "tech" },
                sortBy: [SortDescriptor(\.title)])
        ).map(\.title)
        let expected = (0..<5).flatMap { c in (0..<c).filter { (c + $0) % 3 == 0 }.map { "c\(c)-a\($0)" } }
        #expect(titles == expected.sorted())
        #expect(titles == ["c2-a1", "c3-a0", "c4-a2"])
        let orphans = try ModelContext(container).fetchCount(FetchDescriptor<Article>(predicate: #Predicate { $0.collection == nil }))
        #expect(orphans == 0)
        let viaTwoHops = try ModelContext(container).fetchCount(FetchDescriptor<Article>(predicate: #Predicate { $0.collection?.name == "c4" }))
        #expect(viaTwoHops == 4)
    }

    @Test func toManyContainsWhereIsOneSubquery() throws {
        let name = "art"
        counter.reset()
        let count = try ModelContext(container).fetchCount(
            FetchDescriptor<ArticleCollection>(
                predicate: #Predicate {
                    $0.articles.contains { $0.category?.name == name }
                }))
        #expect(counter.selects.count == 1, "one SQL query: \(counter.selects)")
        #expect(counter.selects.first?.contains("IN (SELECT") == true, "a semi-join subquery, not a fetch per collection")
        let expected = (0..<5).filter { c in (0..<c).contains { (c + $0) % 3 == 2 } }.count
        #expect(count == expected)
    }

    @Test func toManyIsEmptyCountAndAllSatisfy() throws {
        #expect(try names(#Predicate { $0.articles.isEmpty }) == ["c0"])
        #expect(try names(#Predicate { $0.articles.count > 3 }) == ["c4"])
        #expect(try names(#Predicate { $0.articles.allSatisfy { $0.category?.name == "news" } }) == ["c0", "c1"], "c0 vacuously, c1's only article is news")
    }

    @Test func manyToManyExistsThroughTheJoinTable() throws {
        let context = ModelContext(container)
        let swift = Tag(label: "swift")
        context.insert(swift)
        let first = try #require(try context.fetch(FetchDescriptor<Article>(predicate: #Predicate { $0.title == "c2-a0" })).first)
        first.tags = [swift]
        try context.save()
        let tagged = try ModelContext(container).fetch(FetchDescriptor<Article>(predicate: #Predicate { $0.tags.contains { $0.label == "swift" } }))
        #expect(tagged.map(\.title) == ["c2-a0"])
        let tags = try ModelContext(container).fetch(FetchDescriptor<Tag>(predicate: #Predicate { $0.articles.contains { $0.title == "c2-a0" } }))
        #expect(tags.map(\.label) == ["swift"])
    }

    @Test func sortingByAToOneKeyPath() throws {
        var descriptor = FetchDescriptor<Article>(sortBy: [SortDescriptor(\Article.category?.name), SortDescriptor(\.title)])
        descriptor.fetchLimit = 3
        let context = ModelContext(container)  // kept alive: relationships load through it
        let sorted = try context.fetch(descriptor)
        #expect(sorted.map { $0.category?.name } == ["art", "art", "art"])
        #expect(sorted.map(\.title) == sorted.map(\.title).sorted())
    }

    @Test func prefetchingLoadsChildrenOfManyParentsInOneQuery() throws {
        let context = ModelContext(container)
        var descriptor = FetchDescriptor<ArticleCollection>(sortBy: [SortDescriptor(\.name)])
        descriptor.relationshipKeyPathsForPrefetching = [\.articles]
        counter.reset()
        let collections = try context.fetch(descriptor)
        let counts = collections.map { $0.articles.count }
        #expect(counts == [0, 1, 2, 3, 4])
        #expect(counter.selects.count == 2, "parents + children: \(counter.selects)")
    }

    @Test func withoutPrefetchingEachParentLoadsLazilyOnFirstAccess() throws {
        let context = ModelContext(container)
        counter.reset()
        let collections = try context.fetch(FetchDescriptor<ArticleCollection>(sortBy: [SortDescriptor(\.name)]))
        #expect(counter.selects.count == 1, "nothing related is loaded by the fetch")
        _ = collections.map { $0.articles.count }
        #expect(counter.selects.count == 1 + collections.count)
        _ = collections.map { $0.articles.count }
        #expect(counter.selects.count == 1 + collections.count, "loaded once")
    }

    @Test func prefetchingAToOne() throws {
        let context = ModelContext(container)
        var descriptor = FetchDescriptor<Article>()
        descriptor.relationshipKeyPathsForPrefetching = [\.category]
        counter.reset()
        let articles = try context.fetch(descriptor)
        #expect(Set(articles.compactMap { $0.category?.name }) == ["tech", "news", "art"])
        #expect(counter.selects.count == 2, "\(counter.selects)")
    }
}

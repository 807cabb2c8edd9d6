import Tandem

/// Issue 3's figures: "fetch collections whose articles include a category" as one SQL
/// `EXISTS` vs loading everything and filtering in memory (≥ 10× faster), and the number of
/// queries prefetching the children of 1 000 parents takes (≤ 2).
struct GraphBenchmark {
    static let articlesPerCollection = 10
    static let categories = 20

    let collections: Int
    let runs: Int
    let scratch: Scratch

    /// Builds `collections` × 10 articles over 20 categories in `container`.
    static func populate(_ container: ModelContainer, collections: Int) throws {
        let context = ModelContext(container)
        let categories = (0..<Self.categories).map { GraphCategory(name: "category-\($0)") }
        for category in categories { context.insert(category) }
        for c in 0..<collections {
            let collection = GraphCollection(name: "collection-\(c)")
            context.insert(collection)
            var articles: [GraphArticle] = []
            for a in 0..<articlesPerCollection {
                let article = GraphArticle(title: "article-\(c)-\(a)")
                // Category 19 is rare: it appears in 1 collection out of 50.
                article.category = categories[(c % 50 == 0 && a == 0) ? 19 : (c * 7 + a) % 19]
                articles.append(article)
            }
            collection.articles = articles
        }
        try context.save()
    }

    func run(into report: inout Report) throws {
        let path = scratch.freshPath("graph")
        defer { scratch.remove(path) }
        let container = try ModelContainer(for: graphModels, configurations: [ModelConfiguration(url: URL(filePath: path))])
        try Self.populate(container, collections: collections)
        let wanted = "category-19"
        let expected = (0..<collections).filter { $0 % 50 == 0 }.count
        var sql = Measurement("#Predicate contains(where:), one query")
        var memory = Measurement("load all + filter in memory")
        for round in 0...runs {
            let (sqlTime, found) = try Stopwatch.time { () throws -> [GraphCollection] in
                let context = ModelContext(container)
                return try context.fetch(
                    FetchDescriptor<GraphCollection>(
                        predicate: #Predicate {
                            $0.articles.contains { $0.category?.name == wanted }
                        }))
            }
            let (memoryTime, filtered) = try Stopwatch.time { () throws -> (ModelContext, [GraphCategory], [GraphCollection]) in
                let context = ModelContext(container)
                let categories = try context.fetch(FetchDescriptor<GraphCategory>())  // keeps them in the identity map
                var everything = FetchDescriptor<GraphCollection>()
                everything.relationshipKeyPathsForPrefetching = [\.articles]
                let all = try context.fetch(everything)
                return (context, categories, all.filter { $0.articles.contains { $0.category?.name == wanted } })
            }
            guard found.count == expected, filtered.2.count == expected else {
                throw BenchError("graph: found \(found.count) and \(filtered.2.count) collections, expected \(expected)")
            }
            if round > 0 {
                sql.samples.append(sqlTime)
                memory.samples.append(memoryTime)
            }
        }
        let operation = "\(collections) collections × 10 articles: collections with an article of a category"
        report.comparisons.append(Comparison(operation: operation, tandem: sql, competitor: memory, target: .speedupAtLeast(10)))
        report.measurements += [sql, memory].map { $0.labelled("graph") }
        report.notes.append(try prefetchQueryCount())
    }

    /// Prefetching the articles of 1 000 collections, counted with GRDB's statement trace on a
    /// one-connection (in-memory) store.
    func prefetchQueryCount() throws -> String {
        let container = try ModelContainer(for: graphModels, configurations: [ModelConfiguration(isStoredInMemoryOnly: true)])
        try Self.populate(container, collections: 1_000)
        let counter = SelectCounter()
        // Installed through read (same connection in memory): a write would count its own journal bookkeeping.
        try container.read { db in db.trace { counter.record("\($0)") } }
        let context = ModelContext(container)
        var descriptor = FetchDescriptor<GraphCollection>()
        descriptor.relationshipKeyPathsForPrefetching = [\.articles]
        let collections = try context.fetch(descriptor)
        let articles = collections.reduce(0) { $0 + $1.articles.count }
        let queries = counter.count
        let verdict = queries <= 2 && articles == 10_000 ? "PASS" : "**FAIL**"
        return "prefetching the articles of \(collections.count) collections (\(articles) articles): \(queries) queries (target ≤ 2): \(verdict)"
    }
}

/// Counts SELECT statements seen by a trace.
final class SelectCounter: @unchecked Sendable {
    // @unchecked: guarded by `lock`.
    private let lock = NSLock()
    private var selects = 0
    func record(_ sql: String) {
        if sql.uppercased().hasPrefix("SELECT") { lock.withLock { selects += 1 } }
    }
    var count: Int { lock.withLock { selects } }
}

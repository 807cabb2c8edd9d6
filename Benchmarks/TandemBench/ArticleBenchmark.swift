import Tandem

/// Fetch of a seed-style model (``BenchArticle``: a composite with an optional and a `Date`,
/// a `String` enum, an optional enum, optionals): Tandem's `fetch` against GRDB's `fetchAll`
/// with a positional `init(row:)` over the same 11 columns, goal ≤ 1.5×.
struct ArticleBenchmark {
    let rows: Int
    let runs: Int
    let scratch: Scratch

    static let columns = ["#id", "title", "author.name", "author.email", "author.since", "status", "section", "rating", "published", "views", "pinned", "body"]
        .map { "\"\($0)\"" }.joined(separator: ", ")

    func run(into report: inout Report) throws {
        let path = scratch.freshPath("articles")
        defer { scratch.remove(path) }
        let seeds = ArticleSeed.make(rows: rows)
        let expected = seeds.reduce(0) { $0 &+ $1.digest }
        do {
            let container = try ModelContainer(for: BenchArticle.self, configurations: ModelConfiguration(url: URL(filePath: path)))
            let context = ModelContext(container)
            for seed in seeds { context.insert(BenchArticle(seed)) }
            try context.save()
        }
        let container = try ModelContainer(for: BenchArticle.self, configurations: ModelConfiguration(url: URL(filePath: path)))
        let pool = try GRDBCompetitor.open(path, createTable: false)
        defer { try? pool.close() }
        var tandem = Measurement("Tandem")
        var grdb = Measurement("GRDB fetchAll, init(row:)")
        for round in 0...runs {
            let (tandemTime, articles) = try Stopwatch.time {
                try ModelContext(container).fetch(FetchDescriptor(predicate: #Predicate<BenchArticle> { $0.views >= 0 }))
            }
            let (grdbTime, records) = try Stopwatch.time {
                try pool.read { db in
                    try GRDBArticle.fetchAll(db, sql: "SELECT \(Self.columns) FROM \"BenchArticle\" WHERE \"views\" >= ?", arguments: [0])
                }
            }
            let tandemSum = articles.reduce(0) { $0 &+ $1.seed.digest }
            let grdbSum = records.reduce(0) { $0 &+ $1.seed.digest }
            guard articles.count == rows, records.count == rows, tandemSum == expected, grdbSum == expected else {
                throw BenchError("articles: Tandem read \(articles.count) rows (digest \(tandemSum)), GRDB \(records.count) (\(grdbSum)); expected \(rows) (\(expected))")
            }
            if round > 0 {
                tandem.samples.append(tandemTime)
                grdb.samples.append(grdbTime)
            }
        }
        let operation = "fetch \(rows) articles (composite with optional and Date, String enum, optional enum), #Predicate, fresh context"
        report.comparisons.append(Comparison(operation: operation, tandem: tandem, competitor: grdb, target: .ratioAtMost(1.5)))
        report.measurements += [tandem, grdb].map { $0.labelled("articles") }
    }
}

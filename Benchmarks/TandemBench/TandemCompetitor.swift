import Tandem

/// Tandem: `ModelContainer` + `ModelContext` on its own store file.
enum TandemCompetitor {
    static func open(_ path: String) throws -> ModelContainer {
        try ModelContainer(for: BenchTodo.self, configurations: ModelConfiguration(url: URL(filePath: path)))
    }

    /// Test 1: create N objects, insert them, one `save()`. The objects are kept alive until
    /// the clock stops (deallocation is not measured, as for the other competitors).
    static func insert(_ seeds: [TodoSeed], into container: ModelContainer) throws -> Duration {
        let (elapsed, kept) = try Stopwatch.time { () throws -> [BenchTodo] in
            let context = ModelContext(container)
            var objects: [BenchTodo] = []
            objects.reserveCapacity(seeds.count)
            for seed in seeds {
                let todo = BenchTodo(seed)
                context.insert(todo)
                objects.append(todo)
            }
            try context.save()
            return objects
        }
        _ = kept.count
        return elapsed
    }

    /// Test 2: a predicate matching every row, into a fresh context.
    static func fetch(_ container: ModelContainer) throws -> (Duration, [BenchTodo]) {
        try Stopwatch.time {
            let context = ModelContext(container)
            return try context.fetch(FetchDescriptor(predicate: #Predicate<BenchTodo> { $0.people.age >= 0 }))
        }
    }

    /// Test 3, Tandem's way: `GROUP BY` in SQLite.
    static func groupCountSQL(_ container: ModelContainer) throws -> (Duration, [Int: Int]) {
        try Stopwatch.time {
            let context = ModelContext(container)
            return try context.fetchCount(FetchDescriptor<BenchTodo>(), groupedBy: \.count)
        }
    }

    /// Test 3, the naive way: fetch every object, count in a `Dictionary`.
    static func groupCountInMemory(_ container: ModelContainer) throws -> (Duration, [Int: Int]) {
        let (elapsed, result) = try Stopwatch.time { () throws -> ([Int: Int], [BenchTodo]) in
            let context = ModelContext(container)
            let todos = try context.fetch(FetchDescriptor<BenchTodo>())
            var counts: [Int: Int] = [:]
            for todo in todos { counts[todo.count, default: 0] += 1 }
            return (counts, todos)
        }
        return (elapsed, result.0)
    }

    static func count(_ container: ModelContainer) throws -> Int {
        try container.read { db in try Int.fetchOne(db, sql: #"SELECT COUNT(*) FROM "BenchTodo""#) ?? 0 }
    }

    /// The `CREATE TABLE` statement Tandem stored, for ``BenchSchema/verify(tandemDDL:)``.
    static func ddl(_ container: ModelContainer) throws -> String {
        try container.read { db in
            try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", arguments: [BenchSchema.table]) ?? ""
        }
    }
}

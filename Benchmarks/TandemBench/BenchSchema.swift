import Tandem

/// The one table layout every competitor writes: Tandem creates it from ``BenchTodo``; the
/// GRDB and raw C databases run ``createTable``, which is checked against the DDL Tandem
/// stored (``verify(tandemDDL:)``) so the layouts cannot drift apart.
enum BenchSchema {
    static let table = "BenchTodo"

    /// Column order of `SELECT *`, which the positional decoders rely on.
    static let columns = [
        "#id", "code", "title", "people.name", "people.age", "priority", "weight",
        "done", "count", "score", "timestamp", "note",
    ]

    static let createTable = """
        CREATE TABLE "BenchTodo" ("#id" TEXT NOT NULL PRIMARY KEY, "code" TEXT NOT NULL, \
        "title" TEXT NOT NULL, "people.name" TEXT NOT NULL, "people.age" INTEGER NOT NULL, \
        "priority" INTEGER NOT NULL, "weight" REAL, "done" INTEGER NOT NULL, "count" INTEGER NOT NULL, \
        "score" REAL NOT NULL, "timestamp" REAL NOT NULL, "note" TEXT NOT NULL)
        """

    /// `count` is `@Attribute(.indexed)` — the column the group-by test groups on, indexed as
    /// a user grouping by it would. Every competitor's table carries the same index, so the
    /// insert test maintains one extra index everywhere.
    static let createIndex = #"CREATE INDEX "BenchTodo.count.index" ON "BenchTodo" ("count")"#

    /// The table and its index.
    static let createTableAndIndex = createTable + ";\n" + createIndex

    static let insert = """
        INSERT INTO "BenchTodo" (\(columns.map { "\"\($0)\"" }.joined(separator: ", "))) \
        VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))
        """

    /// The fetch of test 2, for GRDB and raw C (Tandem compiles the same condition from
    /// `#Predicate { $0.people.age >= 0 }`).
    static let selectAllByAge = #"SELECT * FROM "BenchTodo" WHERE "people.age" >= ?"#

    /// Fails when Tandem's own DDL differs from ``createTable`` plus the journal's hidden
    /// stamp column (which only Tandem has: the competitors run without a journal).
    static func verify(tandemDDL: String) throws {
        guard tandemDDL == createTable.dropLast() + ##", "#hlc" TEXT)"## else {
            throw BenchError("table layouts differ.\n  Tandem: \(tandemDDL)\n  bench:  \(createTable)")
        }
    }
}

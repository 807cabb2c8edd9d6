import Foundation
import GRDB
import Tandem
import TandemSchema
import TandemSync
import TandemWire

/// Stores made from a schema alone, edited with SQL as the CLI does.
enum SyncFixtures {
    static let schema = Schema(entities: [
        Schema.Entity(name: "Todo", attributes: [
            Schema.Attribute(name: "title", type: .scalar(.string)),
            Schema.Attribute(name: "rank", type: .scalar(.int), isOptional: true),
        ]),
    ])

    static func store(_ name: String = UUID().uuidString, schema: Schema = SyncFixtures.schema, dataset: String = "todos") throws -> ModelContainer {
        let directory = FileManager.default.temporaryDirectory.appending(path: "tandem-sync-stores")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return try ModelContainer(schema: schema, configuration: ModelConfiguration(url: directory.appending(path: "\(name).store"), dataset: dataset))
    }

    static func id(_ n: Int) -> String { String(format: "00000000-0000-0000-0000-%012d", n) }

    static func insert(_ store: ModelContainer, _ n: Int, title: String, rank: Int? = nil) throws {
        try store.write(author: "app") { db in
            try db.execute(sql: "INSERT INTO Todo (\"#id\", title, rank) VALUES (?, ?, ?)", arguments: [id(n), title, rank])
        }
    }

    static func update(_ store: ModelContainer, _ n: Int, _ column: String, _ value: (any DatabaseValueConvertible)?) throws {
        try store.write(author: "app") { db in
            try db.execute(sql: "UPDATE Todo SET \"\(column)\" = ? WHERE \"#id\" = ?", arguments: [value, id(n)])
        }
    }

    static func delete(_ store: ModelContainer, _ n: Int) throws {
        try store.write(author: "app") { db in try db.execute(sql: "DELETE FROM Todo WHERE \"#id\" = ?", arguments: [id(n)]) }
    }

    /// Every record: id → (title, rank).
    static func rows(_ store: ModelContainer) throws -> [String: [String]] {
        try store.read { db in
            try Row.fetchAll(db, sql: "SELECT \"#id\", title, rank FROM Todo").reduce(into: [:]) { result, row in
                result[row[0]] = [row[1] ?? "nil", (row[2] as Int?).map(String.init) ?? "nil"]
            }
        }
    }
}

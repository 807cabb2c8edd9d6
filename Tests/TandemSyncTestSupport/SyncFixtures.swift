public import Foundation
public import GRDB
public import Tandem
public import TandemSchema
import TandemSync
import TandemWire

/// Stores made from a schema alone, edited with SQL as the CLI does: shared by the sync
/// engine's tests (TandemSyncTests) and the client-and-server tests of the Server package.
public enum SyncFixtures {
    /// Waits (polling every millisecond) until `condition` holds: test transports use it to
    /// hold one request back until another has reached a given point.
    public static func waitUntil(_ condition: () -> Bool) async throws {
        while !condition() { try await Task.sleep(for: .milliseconds(1)) }
    }

    /// Todos in projects: deleting a project deletes its todos (`.cascade`).
    public static let schema = Schema(entities: [
        Schema.Entity(
            name: "Todo",
            attributes: [
                Schema.Attribute(name: "title", type: .scalar(.string)),
                Schema.Attribute(name: "rank", type: .scalar(.int), isOptional: true),
            ],
            relationships: [
                Schema.Relationship(name: "project", destination: "Project", cardinality: .toOne, inverse: "todos")
            ]),
        Schema.Entity(
            name: "Project",
            attributes: [
                Schema.Attribute(name: "name", type: .scalar(.string))
            ],
            relationships: [
                Schema.Relationship(name: "todos", destination: "Todo", cardinality: .toMany, inverse: "project", deleteRule: .cascade)
            ]),
    ])

    /// The same with `.nullify`: deleting a project leaves its todos without one.
    public static let nullifyingSchema: Schema = {
        var schema = SyncFixtures.schema
        schema.entities[1].relationships[0].deleteRule = .nullify
        return schema
    }()

    /// ``schema`` with a unique project name: two projects named alike on two replicas merge.
    public static let uniqueProjectSchema: Schema = {
        var schema = SyncFixtures.schema
        schema.entities[1].attributes[0].options = [.unique]
        return schema
    }()

    /// A store in memory for dataset `dataset`.
    public static func memoryStore(_ dataset: String, schema: Schema = SyncFixtures.schema) throws -> ModelContainer {
        try ModelContainer(schema: schema, configuration: ModelConfiguration(isStoredInMemoryOnly: true, dataset: dataset))
    }

    /// Every project as `<id> <name>`, by id.
    public static func projects(_ store: ModelContainer) throws -> [String] {
        try store.read { db in try Row.fetchAll(db, sql: ##"SELECT "#id", name FROM Project ORDER BY "#id""##).map { "\($0[0] as String) \($0[1] as String)" } }
    }

    /// The project todo `todo` is in.
    public static func project(of todo: Int, _ store: ModelContainer) throws -> String? {
        try store.read { db in try String.fetchOne(db, sql: ##"SELECT project FROM Todo WHERE "#id" = ?"##, arguments: [SyncFixtures.id(todo)]) }
    }

    public static func store(_ name: String = UUID().uuidString, schema: Schema = SyncFixtures.schema, dataset: String = "todos") throws -> ModelContainer {
        let directory = FileManager.default.temporaryDirectory.appending(path: "tandem-sync-stores")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return try ModelContainer(schema: schema, configuration: ModelConfiguration(url: directory.appending(path: "\(name).store"), dataset: dataset))
    }

    public static func id(_ n: Int) -> String { String(format: "00000000-0000-0000-0000-%012d", n) }

    public static func insert(_ store: ModelContainer, _ n: Int, title: String, rank: Int? = nil) throws {
        try store.write(author: "app") { db in
            try db.execute(sql: "INSERT INTO Todo (\"#id\", title, rank) VALUES (?, ?, ?)", arguments: [id(n), title, rank])
        }
    }

    public static func update(_ store: ModelContainer, _ n: Int, _ column: String, _ value: (any DatabaseValueConvertible)?) throws {
        try store.write(author: "app") { db in
            try db.execute(sql: "UPDATE Todo SET \"\(column)\" = ? WHERE \"#id\" = ?", arguments: [value, id(n)])
        }
    }

    public static func delete(_ store: ModelContainer, _ n: Int) throws {
        try store.write(author: "app") { db in try db.execute(sql: "DELETE FROM Todo WHERE \"#id\" = ?", arguments: [id(n)]) }
    }

    public static func insertProject(_ store: ModelContainer, _ n: Int, name: String) throws {
        try store.write(author: "app") { db in
            try db.execute(sql: "INSERT INTO Project (\"#id\", name) VALUES (?, ?)", arguments: [id(n), name])
        }
    }

    /// Puts todo `n` in project `project` (`nil`: none).
    public static func move(_ store: ModelContainer, _ n: Int, to project: Int?) throws {
        try store.write(author: "app") { db in
            try db.execute(sql: "UPDATE Todo SET project = ? WHERE \"#id\" = ?", arguments: [project.map(id), id(n)])
        }
    }

    /// Deletes project `n` the way a model save does, in one transaction: the project first,
    /// then its todos go with it (`.cascade`) or lose it (`.nullify`). Other replicas pull
    /// the delete while the todos still point at the project.
    public static func deleteProject(_ store: ModelContainer, _ n: Int) throws {
        let rule = store.schema.entity(named: "Project")?.relationship(named: "todos")?.deleteRule ?? .cascade
        try store.write(author: "app") { db in
            try db.execute(sql: "DELETE FROM Project WHERE \"#id\" = ?", arguments: [id(n)])
            if rule == .cascade {
                try db.execute(sql: "DELETE FROM Todo WHERE project = ?", arguments: [id(n)])
            } else {
                try db.execute(sql: "UPDATE Todo SET project = NULL WHERE project = ?", arguments: [id(n)])
            }
        }
    }

    /// Every record of both entities with every column, for comparing replicas.
    public static func state(_ store: ModelContainer) throws -> [String] {
        try store.read { db in
            try Row.fetchAll(db, sql: "SELECT \"#id\", title, rank, project FROM Todo ORDER BY \"#id\"").map {
                "todo \($0[0] as String) \($0[1] ?? "nil") \(($0[2] as Int?).map(String.init) ?? "nil") in \(($0[3] as String?) ?? "nil")"
            }
                + Row.fetchAll(db, sql: "SELECT \"#id\", name FROM Project ORDER BY \"#id\"").map { "project \($0[0] as String) \($0[1] as String)" }
        }
    }

    /// Todos pointing at a project this store does not have.
    public static func dangling(_ store: ModelContainer) throws -> [String] {
        try store.read { db in
            try String.fetchAll(db, sql: "SELECT \"#id\" FROM Todo WHERE project IS NOT NULL AND project NOT IN (SELECT \"#id\" FROM Project)")
        }
    }

    /// Every record: id → (title, rank).
    public static func rows(_ store: ModelContainer) throws -> [String: [String]] {
        try store.read { db in
            try Row.fetchAll(db, sql: "SELECT \"#id\", title, rank FROM Todo").reduce(into: [:]) { result, row in
                result[row[0]] = [row[1] ?? "nil", (row[2] as Int?).map(String.init) ?? "nil"]
            }
        }
    }
}

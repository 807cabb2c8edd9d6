// A walkthrough of the Tandem store: create, save, query, URI round trip, reopen.
// Run it with Scripts/demo.sh.
import Tandem

struct People: Codable, Equatable {
    var name: String
    var age: Int
}

enum Priority: Int, Codable, CaseIterable {
    case low, normal, high
}

@Model final class Todo {
    @Attribute(.unique) var code: String
    var title: String
    var people: People
    var tags: [String] = []
    var priority: Priority = .normal
    var weight: Double?
    @Relationship(deleteRule: .cascade, inverse: \Item.todo) var items: [Item] = []

    init(code: String, title: String, people: People, priority: Priority = .normal, tags: [String] = []) {
        self.code = code
        self.title = title
        self.people = people
        self.priority = priority
        self.tags = tags
    }
}

@Model final class Item {
    var name: String
    var done = false
    var todo: Todo?
    init(name: String, done: Bool = false) { self.name = name; self.done = done }
}

let directory = URL(filePath: CommandLine.arguments.dropFirst().first ?? FileManager.default.temporaryDirectory.appending(path: "tandem-demo-\(UUID().uuidString)").path)
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
let storeURL = directory.appending(path: "todos.store")
print("1. Create a store at \(storeURL.path)")
let uri: URL
do {
    let container = try ModelContainer(for: Todo.self, Item.self, configurations: ModelConfiguration(url: storeURL, dataset: "demo"))
    let context = ModelContext(container)
    let todos = [
        Todo(code: "T-1", title: "Write the docs", people: People(name: "Ann", age: 31), priority: .high, tags: ["work"]),
        Todo(code: "T-2", title: "Buy milk", people: People(name: "Bob", age: 16), tags: ["home"]),
        Todo(code: "T-3", title: "Ship 1.0", people: People(name: "Cid", age: 45), priority: .high, tags: ["work", "release"]),
    ]
    for todo in todos { context.insert(todo) }
    todos[2].items = [Item(name: "tag the release", done: true), Item(name: "write notes")]  // inserted with their todo
    print("   inserted \(todos.count) objects; hasChanges = \(context.hasChanges); nothing stored until save")
    try context.save()
    print("2. Saved in one transaction; the table as sqlite3 shows it:")
    let rows = try container.read { db in try Row.fetchAll(db, sql: #"SELECT "code", "people.name", "people.age", "priority", "tags" FROM "Todo" ORDER BY "code""#) }
    for row in rows { print("   \(row)") }

    print("3. Query: adults with high priority, sorted by title (compiled to SQL)")
    let high = Priority.high
    let adultsHigh = FetchDescriptor<Todo>(
        predicate: #Predicate { $0.people.age >= 18 && $0.priority == high },
        sortBy: [SortDescriptor(\.title)])
    for todo in try context.fetch(adultsHigh) { print("   \(todo.code) \(todo.title) — \(todo.people.name), \(todo.people.age)") }
    let tagged = try context.fetch(FetchDescriptor<Todo>(predicate: #Predicate { $0.tags.contains("work") })).map(\.code).sorted()
    print("   tagged 'work': \(tagged)")
    print(
        "   count per priority (GROUP BY in SQLite): \(try context.fetchCount(FetchDescriptor<Todo>(), groupedBy: \.priority).sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key): \($0.value)" })"
    )

    let withDoneItems = try context.fetch(FetchDescriptor<Todo>(predicate: #Predicate { $0.items.contains { $0.done } })).map(\.code)
    print("   todos with a done item (one subquery across the relationship): \(withDoneItems)")

    let first = todos[0]
    uri = first.persistentModelID.uriRepresentation
    print("4. Stable URI of T-1: \(uri.absoluteString)")

    first.title = "Write the docs (v2)"
    try context.save()
    do {
        context.insert(Todo(code: "T-1", title: "duplicate", people: People(name: "Eve", age: 20)))
        try context.save()
    } catch let error as StoreError {
        print("   a duplicate unique code is refused: \(error.code) on \(error.entity ?? "").\(error.attribute ?? "")")
        context.rollback()
    }
}

print("5. Reopen the file and resolve the URI")
let container = try ModelContainer(for: Todo.self, Item.self, configurations: ModelConfiguration(url: storeURL))
let context = ModelContext(container)
let id = try PersistentIdentifier(uriRepresentation: uri)
guard let todo = context.model(for: id) as? Todo else { fatalError("the URI did not resolve after reopening") }
print("   \(id) → \(todo.code) \"\(todo.title)\" (\(try context.fetchCount(FetchDescriptor<Todo>())) records, dataset \(container.dataset))")
let release = try context.fetch(FetchDescriptor<Todo>(predicate: #Predicate { $0.code == "T-3" })).first!
print("   T-3's items, loaded lazily from the file: \(release.items.map(\.name).sorted())")
context.delete(release)
try context.save()
print("   deleting T-3 cascades to its items: \(try context.fetchCount(FetchDescriptor<Item>())) items left")
do {
    _ = try PersistentIdentifier(uriRepresentation: URL(string: "tandem://demo/Todo/not-a-uuid")!)
} catch let error as StoreError {
    print("   a malformed URI is a typed error: \(error.message)")
}
print("Done. The store is at \(storeURL.path)")

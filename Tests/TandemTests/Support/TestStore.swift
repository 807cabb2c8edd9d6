import Foundation
@testable import Tandem

/// A temporary directory removed when the value is released.
final class TemporaryDirectory {
    let url: URL

    init() {
        url = FileManager.default.temporaryDirectory.appending(path: "tandem-tests-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func file(_ name: String = "store.sqlite") -> URL { url.appending(path: name) }

    deinit { try? FileManager.default.removeItem(at: url) }
}

func memoryContainer(_ types: any PersistentModel.Type...) throws -> ModelContainer {
    try ModelContainer(for: types, configurations: [ModelConfiguration(isStoredInMemoryOnly: true)])
}

func people(_ name: String, _ age: Int) -> People { People(name: name, age: age) }

/// A small dataset for predicate tests.
func seededTodos(_ context: ModelContext) throws -> [Todo] {
    let todos = [
        Todo(code: "A", title: "Buy milk", people: people("Ann", 31), priority: .high, weight: 90, tags: ["home", "errand"]),
        Todo(code: "B", title: "Write docs", people: people("Bob", 17), priority: .low, weight: nil, tags: ["work"]),
        Todo(code: "C", title: "Fix Bug", people: people("Cid", 45), priority: .normal, weight: 12.5, tags: []),
        Todo(code: "D", title: "Café visit", people: people("Dee", 18), priority: .high, weight: 70, tags: ["home"]),
    ]
    todos[2].done = true
    todos[0].timestamp = Date(timeIntervalSince1970: 2_000)
    todos[3].timestamp = Date(timeIntervalSince1970: 3_000)
    for todo in todos { context.insert(todo) }
    try context.save()
    return todos
}

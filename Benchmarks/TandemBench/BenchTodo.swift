import Tandem

/// The Tandem model under test: ten attributes, among them a composite (`people`, two
/// columns), an `Int` enum and an optional `Double`.
///
/// Table (created by Tandem, copied verbatim by the other competitors — see ``BenchSchema``):
/// `"#id"` TEXT PRIMARY KEY, code, title, "people.name", "people.age", priority, weight,
/// done, count, score, timestamp, note.
@Model final class BenchTodo {
    var code: String
    var title: String
    var people: People
    var priority: Priority
    var weight: Double?
    var done: Bool
    @Attribute(.indexed) var count: Int
    var score: Double
    var timestamp: Date
    var note: String

    init(
        code: String, title: String, people: People, priority: Priority, weight: Double?,
        done: Bool, count: Int, score: Double, timestamp: Date, note: String
    ) {
        self.code = code
        self.title = title
        self.people = people
        self.priority = priority
        self.weight = weight
        self.done = done
        self.count = count
        self.score = score
        self.timestamp = timestamp
        self.note = note
    }

    convenience init(_ seed: TodoSeed) {
        self.init(
            code: seed.code, title: seed.title, people: People(name: seed.peopleName, age: seed.peopleAge),
            priority: seed.priority, weight: seed.weight, done: seed.done, count: seed.count,
            score: seed.score, timestamp: seed.timestamp, note: seed.note)
    }
}

import Tandem

/// A cheap digest of a result set, computed outside the timed region, to check that every
/// competitor stored and read back the same values.
enum Checksum {
    static func combine(
        _ age: Int, _ count: Int, _ priority: Priority, _ weight: Double?, _ done: Bool,
        _ score: Double, _ timestamp: Date, _ title: String, _ note: String, _ name: String
    ) -> Int {
        var sum = age &+ count &* 3
        sum = sum &+ priority.rawValue &* 5
        sum = sum &+ (weight.map { Int($0 * 2) } ?? 7) &* 11
        sum = sum &+ (done ? 13 : 0)
        sum = sum &+ Int(score * 4)
        sum = sum &+ Int(timestamp.timeIntervalSince1970) % 1000
        sum = sum &+ title.utf8.count &+ note.utf8.count &* 17
        return sum &+ name.utf8.count &* 19
    }

    static func of(_ seeds: [TodoSeed]) -> Int {
        seeds.reduce(0) { $0 &+ combine($1.peopleAge, $1.count, $1.priority, $1.weight, $1.done, $1.score, $1.timestamp, $1.title, $1.note, $1.peopleName) }
    }

    static func of(_ todos: [BenchTodo]) -> Int {
        todos.reduce(0) { $0 &+ combine($1.people.age, $1.count, $1.priority, $1.weight, $1.done, $1.score, $1.timestamp, $1.title, $1.note, $1.people.name) }
    }

    static func of(_ todos: [GRDBTodo]) -> Int {
        todos.reduce(0) { $0 &+ combine($1.peopleAge, $1.count, $1.priority, $1.weight, $1.done, $1.score, $1.timestamp, $1.title, $1.note, $1.peopleName) }
    }

    static func of(_ todos: [RawTodo]) -> Int {
        todos.reduce(0) { $0 &+ combine($1.people.age, $1.count, $1.priority, $1.weight, $1.done, $1.score, $1.timestamp, $1.title, $1.note, $1.people.name) }
    }
}

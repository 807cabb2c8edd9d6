import Tandem

/// The composite attribute of ``BenchTodo``: stored by Tandem as the columns
/// `"people.name"` and `"people.age"`.
struct People: Codable, Hashable {
    var name: String
    var age: Int
}

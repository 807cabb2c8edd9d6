import Tandem

/// The raw C competitor's result: a plain Swift struct filled column by column with
/// `sqlite3_column_*`.
struct RawTodo {
    var id: UUID
    var code: String
    var title: String
    var people: People
    var priority: Priority
    var weight: Double?
    var done: Bool
    var count: Int
    var score: Double
    var timestamp: Date
    var note: String
}

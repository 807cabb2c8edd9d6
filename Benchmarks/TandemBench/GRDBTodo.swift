import Tandem

/// The GRDB competitor: a record struct with the same fields and the same columns.
///
/// The composite is flattened into two stored properties whose coding keys are Tandem's
/// dotted column names, so GRDB's *synthesized* `Encodable` conformance (the reference "GRDB
/// Encodable insert") writes exactly Tandem's layout. Fetching uses the hand-written
/// positional ``init(row:)`` below (GRDB's own "optimized record" style), for `SELECT *`.
struct GRDBTodo: Codable, FetchableRecord, PersistableRecord {
    var id: UUID
    var code: String
    var title: String
    var peopleName: String
    var peopleAge: Int
    var priority: Priority
    var weight: Double?
    var done: Bool
    var count: Int
    var score: Double
    var timestamp: Date
    var note: String

    var people: People { People(name: peopleName, age: peopleAge) }

    static let databaseTableName = BenchSchema.table
    static let databaseUUIDEncodingStrategy = DatabaseUUIDEncodingStrategy.lowercaseString
    static let databaseDateEncodingStrategy = DatabaseDateEncodingStrategy.timeIntervalSince1970

    enum CodingKeys: String, CodingKey {
        case id = "#id"
        case code, title
        case peopleName = "people.name"
        case peopleAge = "people.age"
        case priority, weight, done, count, score, timestamp, note
    }

    init(id: UUID, _ seed: TodoSeed) {
        self.id = id
        code = seed.code
        title = seed.title
        peopleName = seed.peopleName
        peopleAge = seed.peopleAge
        priority = seed.priority
        weight = seed.weight
        done = seed.done
        count = seed.count
        score = seed.score
        timestamp = seed.timestamp
        note = seed.note
    }

    /// Hand-written decoding by column position (the order of ``BenchSchema/columns``).
    init(row: Row) throws {
        id = row[0]
        code = row[1]
        title = row[2]
        peopleName = row[3]
        peopleAge = row[4]
        guard let priority = Priority(rawValue: row[5]) else { throw BenchError("bad priority in a GRDB row") }
        self.priority = priority
        weight = row[6]
        done = row[7]
        count = row[8]
        score = row[9]
        timestamp = Date(timeIntervalSince1970: row[10])
        note = row[11]
    }
}

import Tandem

/// The values of one benchmark row, shared by every competitor so they all store the same
/// data. (Ids are not part of the seed: each competitor makes a fresh `UUID()` per row
/// inside its timed insert, as Tandem does when an object is inserted.)
struct TodoSeed {
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

    /// The number of distinct values of `count`, the group-by key.
    static let distinctCounts = 100

    /// `rows` deterministic seeds: `count` takes ``distinctCounts`` values, `weight` is nil
    /// for one row in four, ages are 0…89 (so `people.age >= 0` matches every row).
    static func make(rows: Int) -> [TodoSeed] {
        let names = ["Ann", "Bob", "Chloé", "Dmitri", "Eve", "Fatima", "Gustav", "Hiro"]
        var seeds: [TodoSeed] = []
        seeds.reserveCapacity(rows)
        for i in 0..<rows {
            let weight: Double? = i % 4 == 0 ? nil : Double(i % 100) + 0.5
            let timestamp = Date(timeIntervalSince1970: 1_700_000_000 + Double(i))
            seeds.append(
                TodoSeed(
                    code: "T-\(i)",
                    title: "Benchmark todo number \(i)",
                    peopleName: names[i % names.count],
                    peopleAge: i % 90,
                    priority: Priority.allCases[i % Priority.allCases.count],
                    weight: weight,
                    done: i % 2 == 0,
                    count: (i * 7) % distinctCounts,
                    score: Double(i) * 0.25,
                    timestamp: timestamp,
                    note: "A short note for row \(i), stored as TEXT"))
        }
        return seeds
    }
}

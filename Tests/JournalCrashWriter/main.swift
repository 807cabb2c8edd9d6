// A writer process for the journal's crash test: it saves random changes to a store as
// fast as it can until it is killed (the test sends SIGKILL at a random moment).
//
// Usage: JournalCrashWriter <store-path> <seed>
import Tandem

@Model final class CrashNote {
    @Attribute(.unique) var code: String
    var body: String
    var count: Int
    var weight: Double
    var tags: [String] = []

    init(code: String, body: String, count: Int, weight: Double) {
        self.code = code
        self.body = body
        self.count = count
        self.weight = weight
    }
}

/// SplitMix64: reproducible randomness from the seed.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

let arguments = CommandLine.arguments
guard arguments.count == 3, let seed = UInt64(arguments[2]) else {
    print("usage: JournalCrashWriter <store-path> <seed>")
    exit(2)
}
var random = SeededGenerator(state: seed)
// It dies with the test that started it: a test run that crashed, or was stopped, must not
// leave it writing as fast as it can.
let parent = getppid()
Thread.detachNewThread {
    while getppid() == parent { usleep(100_000) }
    exit(0)
}
let container = try ModelContainer(for: CrashNote.self, configurations: ModelConfiguration(url: URL(filePath: arguments[1]), dataset: "crash"))
let context = ModelContext(container)
context.author = "crash-writer"
// One write(2), unbuffered: the test waits for it before it starts the clock.
FileHandle.standardOutput.write(Data("ready\n".utf8))

var round = 0
while true {
    round += 1
    switch Int.random(in: 0..<10, using: &random) {
    case 0..<6:
        // A model save: inserts, updates and deletes together.
        for _ in 0..<Int.random(in: 1...20, using: &random) {
            context.insert(
                CrashNote(
                    code: "\(seed)-\(round)-\(UInt32.random(in: 0...UInt32.max, using: &random))",
                    body: String(repeating: "x", count: Int.random(in: 0...200, using: &random)),
                    count: 0, weight: Double.random(in: 0...1, using: &random)))
        }
        var descriptor = FetchDescriptor<CrashNote>()
        descriptor.fetchLimit = 10
        descriptor.fetchOffset = Int.random(in: 0...50, using: &random)
        for note in try context.fetch(descriptor) {
            if Bool.random(using: &random) {
                note.count += 1
                note.tags.append("t\(round)")
            } else if Int.random(in: 0..<4, using: &random) == 0 {
                context.delete(note)
            } else {
                note.weight = Double.random(in: 0...1, using: &random)
            }
        }
        try context.save()
    case 6..<9:
        // Raw SQL through the escape hatch.
        try container.write(author: "raw") { db in
            try db.execute(sql: #"UPDATE "CrashNote" SET "count" = "count" + 1, "body" = 'raw' WHERE abs(random()) % 5 = 0"#)
            try db.execute(sql: #"DELETE FROM "CrashNote" WHERE abs(random()) % 40 = 0"#)
        }
    default:
        // A big save, so kills also land mid-transaction.
        for i in 0..<500 {
            context.insert(CrashNote(code: "\(seed)-\(round)-big-\(i)", body: "bulk", count: i, weight: 0.5))
        }
        try context.save()
    }
}

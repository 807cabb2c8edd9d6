import Dispatch
import Foundation
import GRDB
import Testing
@testable import Tandem
import TandemWAL

@Suite("WAL checkpoints off the writing connection")
struct WALCheckpointerTests {
    /// A pool on `path` whose writer hands its checkpoints to `checkpointer`, with one table.
    private func pool(_ path: String, _ checkpointer: WALCheckpointer) throws -> DatabasePool {
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            if !db.configuration.readonly { checkpointer.install(on: db) }
        }
        let pool = try DatabasePool(path: path, configuration: configuration)
        try pool.write { db in try db.execute(sql: "CREATE TABLE IF NOT EXISTS blob (id INTEGER PRIMARY KEY, data BLOB)") }
        return pool
    }

    /// `count` commits of one row of about two pages each.
    private func writeRows(_ pool: DatabasePool, count: Int) throws {
        for _ in 0..<count {
            try pool.write { db in try db.execute(sql: "INSERT INTO blob (data) VALUES (randomblob(6000))") }
        }
    }

    private func size(_ path: String) -> Int {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    }

    @Test func commitsPastTheThresholdAreCheckpointedOnTheCheckpointersQueue() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("wal.sqlite").path(percentEncoded: false)
        let checkpointer = WALCheckpointer(path: path, threshold: 50, limit: 1_000_000)
        let pool = try pool(path, checkpointer)
        try writeRows(pool, count: 200)
        checkpointer.waitUntilIdle()

        let counts = checkpointer.counts
        #expect(counts.background >= 1)
        #expect(counts.inline == 0)
        #expect(counts.failed == 0, "\(counts.lastError ?? "")")
        // Once idle, the log holds only what was committed after the last full checkpoint,
        // which never reached the threshold (a log at the threshold asks for one more, which
        // copies all of it, no commit running): fewer than 50 pages, some 25 rows. The others
        // reached the database file itself (SQLite's own checkpoint would wait for 1 000
        // pages), and the next commit finds the log under the threshold plus its own pages.
        // (Exact figures depend on when the queue ran: slow machines and sanitizers differ.)
        #expect(size(path) > 150 * 6_000)
        try writeRows(pool, count: 1)
        #expect(checkpointer.logPages < 50 + 10)
        #expect(try pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM blob") } == 201)
    }

    @Test func aLogThatReachesTheLimitIsCheckpointedByTheWriter() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("wal.sqlite").path(percentEncoded: false)
        // Held up: no background checkpoint runs until it is resumed.
        let queue = DispatchQueue(label: "held")
        queue.suspend()
        let checkpointer = WALCheckpointer(path: path, threshold: 10, limit: 100, queue: queue)
        do {
            defer { queue.resume() }
            let pool = try pool(path, checkpointer)
            try writeRows(pool, count: 300)

            let counts = checkpointer.counts
            #expect(counts.background == 0)
            #expect(counts.inline >= 2)
            #expect(counts.failed == 0, "\(counts.lastError ?? "")")
            // Bounded by the limit (100 pages of 4 KiB and their frame headers, plus the
            // commit that crossed it), not by the 300 rows.
            #expect(size(path + "-wal") < 110 * 4_200)
            #expect(try pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM blob") } == 300)
        }
        checkpointer.waitUntilIdle()
        #expect(checkpointer.counts.failed == 0)
    }

    @Test func aCheckpointThatCannotOpenTheFileIsCountedAndLosesNothing() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("wal.sqlite").path(percentEncoded: false)
        // Installed on a connection to another file: its own connection finds nothing to open.
        let checkpointer = WALCheckpointer(path: directory.file("missing/nowhere.sqlite").path(percentEncoded: false), threshold: 20, limit: 1_000_000)
        let pool = try pool(path, checkpointer)
        try writeRows(pool, count: 60)
        checkpointer.waitUntilIdle()

        #expect(checkpointer.counts.failed >= 1)
        #expect(checkpointer.counts.lastError?.contains("cannot open") == true)
        #expect(try pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM blob") } == 60)
    }

    @Test func aStoreFileCheckpointsItsLogOffTheWritingConnection() throws {
        let directory = TemporaryDirectory()
        let container = try ModelContainer(for: [Todo.self], configurations: [ModelConfiguration(url: directory.file())])
        let checkpointer = try #require(container.checkpointer)
        // One commit of about 1 200 pages, past SQLite's threshold.
        try container.write { db in
            try db.execute(sql: "CREATE TABLE scratch (data BLOB)")
            try db.execute(sql: "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 800) INSERT INTO scratch SELECT randomblob(6000) FROM n")
        }
        checkpointer.waitUntilIdle()
        #expect(checkpointer.counts.background == 1)
        #expect(checkpointer.counts.inline == 0)
        #expect(try ModelContainer(for: [Todo.self], configurations: [ModelConfiguration(isStoredInMemoryOnly: true)]).checkpointer == nil)
    }
}

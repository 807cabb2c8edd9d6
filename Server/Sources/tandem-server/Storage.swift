import ArgumentParser
import Foundation
import Logging
import TandemServer
import TandemServerPostgres

/// `tandem-server storage …`: the storage's own operations (layout, epoch, moving to
/// PostgreSQL).
struct Storage: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Migrate the storage's layout, start a new epoch, or copy a SQLite deployment to PostgreSQL.",
        subcommands: [Migrate.self, NewEpoch.self, Copy.self, Compact.self])

    /// `tandem-server storage compact`: what the maintenance service does each hour, now.
    struct Compact: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Compact every dataset's log now, as a running server does each maintenance interval (safe while it serves).",
            discussion: """
                Entries older than --log-retention (and beyond --log-retention-entries) are folded into the records, in short \
                steps; tombstones of deletes older than the compacted log are pruned. Clients whose cursor is older bootstrap \
                again from a snapshot, keeping their unpushed edits.
                """)
        @OptionGroup var data: DataOptions
        @Option(help: "How long the log keeps its entries (45s, 90m, 12h, 30d, 2w), or 'forever'.") var logRetention = "30d"
        @Option(help: "Keep at least the newest N entries of each dataset's log.") var logRetentionEntries: Int64?
        @Option(help: "How far ahead of the server's clock a stamp may be, in milliseconds (as serve).")
        var maxClockSkew = ServerConfiguration().maxClockSkewMilliseconds

        func run() async throws {
            let policy = try Serve.compactionPolicy(retention: logRetention, entries: logRetentionEntries)
            let storage = try await data.storage(applicationName: "tandem-server storage compact")
            defer { (storage as? PostgresServerStorage)?.close() }
            let report = try await storage.compact(
                policy: policy, now: Int64(Date().timeIntervalSince1970 * 1000), maxClockSkew: maxClockSkew)
            print("compacted \(report.entries) log entries of \(report.datasets) dataset(s); pruned \(report.tombstones) tombstone(s)")
        }
    }

    /// `tandem-server storage migrate`: brings the layout up to this version (what the first
    /// `serve` of a new version does by itself).
    struct Migrate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make or migrate the storage's tables to this version's layout, under a lock (serve does it by itself too).")
        @OptionGroup var data: DataOptions

        func run() async throws {
            let storage = try await data.storage(creating: true)
            if let postgres = storage as? PostgresServerStorage {
                defer { postgres.close() }
                print("PostgreSQL layout \(PostgresServerStorage.layoutVersion) at \(postgres.location): up to date")
            } else {
                print("SQLite format \(SQLiteServerStorage.formatVersion) under \(data.directory): up to date")
            }
        }
    }

    /// `tandem-server storage new-epoch`: after a restore the storage cannot see.
    struct NewEpoch: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Start a new epoch: every client's next pull resyncs from the start, pushing its records again.",
            discussion: """
                Needed only after a restore the storage cannot see by itself. A SQLite file copied back, a pg_dump \
                restored into a database and a point-in-time recovery start a new epoch on their own (see docs/server.md). \
                Stop the servers first: a running one keeps the epoch it read (SQLite refuses while one serves).
                """)
        @OptionGroup var data: DataOptions

        func run() async throws {
            let lock = try data.lock(exclusive: true)
            defer { lock?.release() }
            let storage = try await data.storage(applicationName: "tandem-server storage new-epoch")
            if let postgres = storage as? PostgresServerStorage, case let nodes = try await postgres.connectedNodes(), nodes > 0 {
                postgres.close()
                throw ValidationError(
                    "\(nodes) connection(s) of running tandem-server nodes are open on this database: stop every node first (a running node keeps the epoch it read)")
            }
            let epoch = try await storage.startNewEpoch()
            (storage as? PostgresServerStorage)?.close()
            print("epoch \(String(epoch, radix: 16)) started: clients resync on their next sync")
        }
    }

    /// `tandem-server storage copy --from-data-dir DIR --to postgres://…`.
    struct Copy: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Copy a SQLite deployment (stopped) into an empty PostgreSQL database; clients' cursors stay valid.",
            discussion: """
                Copies users, tokens, datasets, schema history, records, the log with its positions, lost values and \
                idempotency answers in one transaction. Run again after it succeeded, it does nothing. The SQLite data is \
                then marked as copied and starts a new epoch: a client that still syncs with it resyncs instead of \
                missing changes.
                """)
        @Option(help: "The SQLite data directory to copy (its server must be stopped).") var fromDataDir: String
        @Option(help: "The PostgreSQL database to copy into: postgres://USER:PASSWORD@HOST:PORT/DATABASE[?sslmode=…].") var to: String

        func run() async throws {
            let source = try DataOptions.parse(["--data-dir", fromDataDir])
            let lock = try source.lock(exclusive: true)
            defer { lock?.release() }
            let sqlite = try source.sqliteStorage()
            let logger = Logger(label: "tandem-server")
            let target: PostgresServerStorage
            do {
                target = try await PostgresServerStorage(url: PostgresURL(to), applicationName: "tandem-server storage copy", listens: false, logger: logger)
            } catch { throw ValidationError("\(error)") }
            defer { target.close() }
            if case let nodes = try await target.connectedNodes(), nodes > 0 {
                throw ValidationError(
                    "\(nodes) connection(s) of running tandem-server nodes are open on \(target.location): stop them first (a running node keeps the cursor key and epoch it read)")
            }
            let report: PostgresServerStorage.CopyReport
            do { report = try await target.copy(from: sqlite) } catch { throw ValidationError("\(error)") }
            if report.alreadyCopied {
                // A copy whose source was not marked (the copy stopped between the two): marked now.
                if sqlite.copiedTo == nil { try await sqlite.markCopied(to: "\(target.location) at \(ISO8601DateFormatter().string(from: Date()))") }
                print("\(target.location) already holds this copy of \(fromDataDir): nothing to do")
                return
            }
            try await sqlite.markCopied(to: "\(target.location) at \(ISO8601DateFormatter().string(from: Date()))")
            for table in SQLiteServerStorage.exportedTables { print("\(table): \(report.rows[table] ?? 0) rows") }
            print("copied \(fromDataDir) to \(target.location); serve with --database (clients keep their cursors)")
        }
    }
}

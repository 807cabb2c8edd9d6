public import GRDB
internal import GRDBSQLite
public import Dispatch
internal import Synchronization
internal import TandemLocking

/// Copies a WAL database's committed pages back into its main file on a thread of its own, so
/// the connection that writes never stops to do it.
///
/// SQLite's automatic checkpoint runs at the end of the commit that takes the write-ahead log
/// past 1 000 pages: before that commit returns, its connection copies the pages into the
/// database file and waits for two `fdatasync`s. A sync pull or a server's group commit
/// writes on that one connection without pause, so every such commit stalled it. Installed on the writing connection,
/// a checkpointer replaces SQLite's: a commit past `threshold` pages only asks, and a second
/// connection runs a passive checkpoint on the checkpointer's queue (it never blocks the
/// writer or a reader, and copies what no reader still needs). The writer restarts the log at
/// its start once a checkpoint has copied all of it, as before.
///
/// When the log still reaches `limit` pages, the committing connection checkpoints itself,
/// as SQLite would have, so the log stays bounded. Under writes that never pause (a pull of
/// 100 000 changes, a server under pushes) that is the usual way round: the writer can
/// restart the log only if a checkpoint copied all of it before its next transaction began,
/// which a checkpoint running beside it rarely manages. The log then grows to `limit` (4 000
/// pages by default, about 16 MiB), and the writer's own checkpoint copies only the little the
/// background ones had not.
///
/// ```swift
/// let checkpointer = WALCheckpointer(path: path)
/// var configuration = Configuration()
/// configuration.prepareDatabase { db in
///     if !db.configuration.readonly { checkpointer.install(on: db) }
/// }
/// let pool = try DatabasePool(path: path, configuration: configuration)
/// ```
///
/// The checkpointer must live as long as the connection it is installed on: capturing it in
/// `prepareDatabase`, as above, does that (the connection keeps its configuration until it
/// is closed). A checkpoint that fails (the file is gone, say) is left to the next one or to
/// the writer's own at `limit`; nothing is lost, the pages stay in the log. Its connection
/// stays open while the checkpointer lives, so the log file is removed when the checkpointer
/// goes, not when the pool closes. `PRAGMA wal_autocheckpoint` on the writing connection
/// replaces the checkpointer with SQLite's own checkpoints.
public final class WALCheckpointer: Sendable {
    /// The database file.
    public let path: String
    /// Log pages after which a commit asks for a checkpoint (SQLite's default: 1 000).
    public let threshold: Int
    /// Log pages after which the committing connection checkpoints itself.
    public let limit: Int

    private let queue: DispatchQueue
    /// Whether a checkpoint is queued and not started yet (commits meanwhile ask no more).
    private let queued = Atomic<Bool>(false)
    private let lastLogPages = Atomic<Int>(0)
    private let tally = Locked(Counts())
    private let connection: Connection

    /// What a checkpointer did, for tests and logs.
    public struct Counts: Sendable, Equatable {
        /// Checkpoints run on the checkpointer's queue.
        public var background = 0
        /// Checkpoints the committing connection ran itself, the log having reached `limit`.
        public var inline = 0
        /// Checkpoints that found another one running (the writer's own at `limit`, or the
        /// checkpointer's): they copy nothing, the running one does.
        public var busy = 0
        /// Checkpoints that failed (the message of the last one in ``lastError``).
        public var failed = 0
        /// What went wrong in the last failed checkpoint: SQLite's message.
        public var lastError: String?
    }

    /// A checkpointer for the database at `path`.
    ///
    /// - Parameters:
    ///   - threshold: log pages after which a commit asks for a checkpoint.
    ///   - limit: log pages after which the committing connection checkpoints itself (at
    ///     least `threshold`).
    ///   - queue: where checkpoints run (a serial queue of its own by default; tests pass
    ///     one they hold up). They run one at a time on a serial queue targeting it.
    public init(path: String, threshold: Int = 1_000, limit: Int = 4_000, queue: DispatchQueue? = nil) {
        self.path = path
        self.threshold = max(threshold, 1)
        self.limit = max(limit, self.threshold)
        // Serial whatever `queue` is: the checkpointer's connection is used by one checkpoint
        // at a time.
        self.queue = DispatchQueue(label: "tandem.wal-checkpoint", target: queue)
        self.connection = Connection(path: path)
    }

    /// Takes over checkpoints of the writing connection `db` (SQLite's automatic checkpoint
    /// is off on it from now on).
    public func install(on db: Database) {
        // `self` is passed unretained: the connection keeps the configuration that captured
        // the checkpointer until it is closed, and calls the hook only while open.
        sqlite3_wal_hook(
            db.sqliteConnection,
            { context, connection, schema, pages in
                guard let context else { return SQLITE_OK }
                Unmanaged<WALCheckpointer>.fromOpaque(context).takeUnretainedValue().committed(pages: Int(pages), connection, schema)
                return SQLITE_OK
            }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// What the checkpointer did so far.
    public var counts: Counts { tally.withLock { $0 } }

    /// The log's length in pages after the last commit of the writing connection: it starts
    /// again from the beginning at the first commit after a checkpoint copied all of it.
    public var logPages: Int { lastLogPages.load(ordering: .relaxed) }

    /// Waits for the checkpoints asked for so far.
    public func waitUntilIdle() {
        queue.sync {}
    }

    /// Called by SQLite after each commit of the writing connection, on its thread, with the
    /// log's length in pages.
    private func committed(pages: Int, _ writer: OpaquePointer?, _ schema: UnsafePointer<CChar>?) {
        lastLogPages.store(pages, ordering: .relaxed)
        if pages >= limit {
            record(Self.checkpoint(writer, schema), inline: true)
            return
        }
        guard pages >= threshold, queued.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        queue.async { [self] in
            // Cleared first: a commit during this checkpoint asks for the next one.
            queued.store(false, ordering: .releasing)
            record(connection.checkpoint(), inline: false)
        }
    }

    /// How a checkpoint went.
    enum Outcome {
        case done, busy
        case failed(String)
    }

    /// Runs a passive checkpoint of `schema` (all attached databases when `nil`) on
    /// `connection`.
    static func checkpoint(_ connection: OpaquePointer?, _ schema: UnsafePointer<CChar>?) -> Outcome {
        var logged: Int32 = 0
        var copied: Int32 = 0
        switch sqlite3_wal_checkpoint_v2(connection, schema, SQLITE_CHECKPOINT_PASSIVE, &logged, &copied) {
        case SQLITE_OK where logged >= 0: return .done
        case SQLITE_OK: return .failed("the database is not in WAL mode")
        case SQLITE_BUSY: return .busy  // another checkpoint (the writer's own, at `limit`, or ours) is running
        default: return .failed(String(cString: sqlite3_errmsg(connection)))
        }
    }

    private func record(_ outcome: Outcome, inline: Bool) {
        tally.withLock { counts in
            switch outcome {
            case .done where inline: counts.inline += 1
            case .done: counts.background += 1
            case .busy: counts.busy += 1
            case .failed(let message):
                counts.failed += 1
                counts.lastError = message
            }
        }
    }

    /// The checkpointer's own connection, opened at its first checkpoint.
    ///
    /// `@unchecked Sendable`: `handle` is read and written only by `checkpoint()`, which runs
    /// on the checkpointer's serial queue, and by `deinit`, which runs once no queued block
    /// holds the checkpointer (each holds it strongly) and so none can run.
    private final class Connection: @unchecked Sendable {
        let path: String
        var handle: OpaquePointer?

        init(path: String) {
            self.path = path
        }

        /// Runs a passive checkpoint.
        func checkpoint() -> Outcome {
            if handle == nil {
                var opened: OpaquePointer?
                let result = sqlite3_open_v2(path, &opened, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil)
                guard result == SQLITE_OK, let opened else {
                    let message = opened.map { String(cString: sqlite3_errmsg($0)) } ?? "code \(result)"
                    sqlite3_close_v2(opened)
                    return .failed("cannot open \(path) to checkpoint it: \(message)")
                }
                // Checkpoints sync the log, then the database file, as the writer's would.
                // Reading the schema opens the log too: a connection that never read has no
                // log to checkpoint, and its checkpoints would copy nothing.
                guard sqlite3_exec(opened, "PRAGMA synchronous = NORMAL; SELECT 1 FROM sqlite_schema LIMIT 1", nil, nil, nil) == SQLITE_OK else {
                    let message = String(cString: sqlite3_errmsg(opened))
                    sqlite3_close_v2(opened)
                    return .failed("cannot read \(path) to checkpoint it: \(message)")
                }
                handle = opened
            }
            return WALCheckpointer.checkpoint(handle, nil)
        }

        deinit {
            sqlite3_close_v2(handle)
        }
    }
}

// The sync engine end to end on loopback: N changes from store A through tandem-server to
// store B, with raw SQLite inserts of the same rows in the same run for scale; no-op sync
// latency on a small and on the large store; the process's peak RSS.
// Usage: SyncBench --server URL --token TOKEN [--changes N] [--server-pid PID]   (Scripts/bench-sync.sh runs it)
// Each figure is also appended as a JSON line to $SYNCBENCH_DATA (default .build/bench/sync.jsonl),
// which Scripts/bench-charts.py draws.
// SYNCBENCH_TRANSPORTS=1: the engine in this process over each transport (libcurl, URLSession)
// side by side instead: A's push and B's pull of N changes, no-op and 100-change syncs.
import Foundation
import GRDB
import Logging
import GRDBSQLite
import Tandem
import TandemCurl
import TandemSchema
import TandemSync
import TandemURLSession
import Synchronization

func argument(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

guard let server = argument("--server"), let token = argument("--token") else {
    FileHandle.standardError.write(Data("usage: SyncBench --server URL --token TOKEN [--changes N]\n".utf8))
    exit(2)
}
LoggingSystem.bootstrap { label in
    var handler = StreamLogHandler.standardError(label: label)
    handler.logLevel = .error
    return handler
}
let changes = argument("--changes").flatMap(Int.init) ?? 100_000
let directory = FileManager.default.temporaryDirectory.appending(path: "tandem-syncbench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }
/// The `tandem` processes running (a daemon among them), killed by ``finish(_:)``.
let running = Mutex<Set<pid_t>>([])

/// Exits with `status`, killing the `tandem` processes still running and removing the stores
/// first (`exit` skips the `defer`s: the early exits of profiled and partial runs left the
/// stores behind, and a failed run could leave B's daemon syncing).
func finish(_ status: Int32) -> Never {
    for pid in running.withLock({ $0 }) { kill(pid, SIGKILL) }
    try? FileManager.default.removeItem(at: directory)
    exit(status)
}

/// SYNCBENCH_UNIQUE=1: the title is a `.unique` attribute, as in seed-style models.
let uniqueTitles = ProcessInfo.processInfo.environment["SYNCBENCH_UNIQUE"] != nil

/// Appends one figure as a JSON line to `SYNCBENCH_DATA` (`{"figure": "sync", "changes": …}`).
func record(_ figure: String, _ values: [String: Double]) {
    let path = ProcessInfo.processInfo.environment["SYNCBENCH_DATA"] ?? ".build/bench/sync.jsonl"
    var object: [String: Any] = values
    object["figure"] = figure
    object["changes"] = changes
    object["uniqueTitles"] = uniqueTitles
    guard let line = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return }
    let url = URL(fileURLWithPath: path)
    try? FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    if !FileManager.default.fileExists(atPath: path) { FileManager.default.createFile(atPath: path, contents: nil) }
    guard let file = try? FileHandle(forWritingTo: url) else { return }
    defer { try? file.close() }
    _ = try? file.seekToEnd()
    try? file.write(contentsOf: line + Data("\n".utf8))
}

let schema = Schema(entities: [
    Schema.Entity(
        name: "Todo",
        attributes: [
            Schema.Attribute(name: "title", type: .scalar(.string), options: uniqueTitles ? [.unique] : []),
            Schema.Attribute(name: "rank", type: .scalar(.int)),
            Schema.Attribute(name: "done", type: .scalar(.bool)),
        ])
])

func seconds(_ body: () async throws -> Void) async rethrows -> Double {
    let start = ContinuousClock.now
    try await body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

func uuid(_ n: Int) -> String { String(format: "%08x-0000-4000-8000-%012x", n >> 16, n) }

func store(_ name: String, dataset: String) throws -> ModelContainer {
    try ModelContainer(schema: schema, configuration: ModelConfiguration(url: directory.appending(path: name), dataset: dataset))
}

func fill(_ store: ModelContainer, count: Int, offset: Int = 0) throws {
    try store.write(author: "app") { db in
        let statement = try db.makeStatement(sql: "INSERT INTO Todo (\"#id\", title, rank, done) VALUES (?, ?, ?, ?)")
        for n in offset..<(offset + count) { try statement.execute(arguments: [uuid(n), "todo \(n)", n, n % 2]) }
    }
}

func engine(_ store: ModelContainer, overURLSession: Bool = false) throws -> SyncEngine {
    let transport: any Transport = overURLSession ? try URLSessionTransport(baseURL: server) : try CurlTransport(baseURL: server)
    return SyncEngine(container: store, transport: transport, configuration: SyncConfiguration(token: { token }))
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

// Raw SQLite C API: the same rows into a plain table, one transaction, prepared statement.
func rawInsert(count: Int) throws -> Double {
    var db: OpaquePointer?
    let path = directory.appending(path: "raw.sqlite").path(percentEncoded: false)
    guard sqlite3_open(path, &db) == SQLITE_OK else { throw CocoaError(.fileWriteUnknown) }
    defer { sqlite3_close(db) }
    sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; CREATE TABLE Todo(id TEXT PRIMARY KEY, title TEXT NOT NULL, rank INTEGER NOT NULL, done INTEGER NOT NULL)", nil, nil, nil)
    let start = ContinuousClock.now
    sqlite3_exec(db, "BEGIN", nil, nil, nil)
    var statement: OpaquePointer?
    sqlite3_prepare_v2(db, "INSERT INTO Todo VALUES (?, ?, ?, ?)", -1, &statement, nil)
    let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
    for n in 0..<count {
        sqlite3_bind_text(statement, 1, uuid(n), -1, transient)
        sqlite3_bind_text(statement, 2, "todo \(n)", -1, transient)
        sqlite3_bind_int64(statement, 3, Int64(n))
        sqlite3_bind_int64(statement, 4, Int64(n % 2))
        sqlite3_step(statement)
        sqlite3_reset(statement)
    }
    sqlite3_finalize(statement)
    sqlite3_exec(db, "COMMIT", nil, nil, nil)
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

let tandem = URL(filePath: CommandLine.arguments[0]).deletingLastPathComponent().appending(path: "tandem").path(percentEncoded: false)

/// Starts `tandem` with `arguments` (the token in its environment), standard output to
/// `output`; returns its pid.
func spawnTandem(_ arguments: [String], output: String) throws -> pid_t {
    var arguments = [tandem] + arguments
    // SYNCBENCH_PERF_DIR=dir profiles each side with `perf record` (the RSS is then perf's).
    if let perfDirectory = ProcessInfo.processInfo.environment["SYNCBENCH_PERF_DIR"] {
        let name = URL(filePath: output).deletingPathExtension().deletingPathExtension().lastPathComponent
        let callGraph = ProcessInfo.processInfo.environment["SYNCBENCH_PERF_CALLGRAPH"].map { ["--call-graph", $0] } ?? ["-g"]
        arguments = ["/usr/bin/perf", "record", "-F", "1999"] + callGraph + ["-o", "\(perfDirectory)/\(name).perf", "--"] + arguments
    }
    var environment = ProcessInfo.processInfo.environment
    environment["TANDEM_TOKEN"] = token
    environment["TANDEM_LOG_LEVEL"] = "error"
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    let argv = arguments.map { strdup($0) } + [nil]
    let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { for pointer in argv + envp { free(pointer) } }
    var pid: pid_t = 0
    guard posix_spawn(&pid, arguments[0], &actions, nil, argv, envp) == 0 else { throw CocoaError(.executableNotLoadable) }
    running.withLock { _ = $0.insert(pid) }
    return pid
}

/// Runs `tandem sync` on a store as a child process, as a user or the daemon would; returns
/// its summary and its peak RSS (MiB, from wait4).
func tandemSync(_ store: String) throws -> (summary: String, peakMiB: Int, cpu: Double) {
    let output = directory.appending(path: "\(store).sync.json").path(percentEncoded: false)
    let pid = try spawnTandem(["sync", "--store", directory.appending(path: store).path(percentEncoded: false), "--server", server, "--json"], output: output)
    var status: Int32 = 0
    var usage = rusage()
    _ = wait4(pid, &status, 0, &usage)
    running.withLock { _ = $0.remove(pid) }
    let summary = (try? String(contentsOfFile: output, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
    guard status == 0 else {
        FileHandle.standardError.write(Data("SyncBench: tandem sync exited with status \(status): \(summary)\n".utf8))
        finish(1)
    }
    let cpu = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    return (summary, usage.ru_maxrss / 1024, cpu)
}

func count(_ key: String, in summary: String) -> Int {
    (try? JSONSerialization.jsonObject(with: Data(summary.utf8)) as? [String: Any])?[key] as? Int ?? -1
}

/// The server's CPU time so far (seconds), from /proc, when `--server-pid` names it.
func serverCPU() -> Double? {
    guard let pid = argument("--server-pid"), let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let end = stat.lastIndex(of: ")")
    else { return nil }
    let fields = stat[stat.index(after: end)...].split(separator: " ")
    guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

let raw = try rawInsert(count: changes)
let dataset = ProcessInfo.processInfo.environment["SYNCBENCH_DATASET"] ?? (uniqueTitles ? "bench-unique" : "bench")

// SYNCBENCH_TRANSPORTS=1: the same syncs in this process over each transport, alternating
// (curl, URLSession, URLSession, curl, …: the machine's drift hits both alike); medians of 3
// rounds. On Linux, URLSession is FoundationNetworking, itself on libcurl: the figures say
// what it costs here, not what URLSession costs on an iPhone.
if ProcessInfo.processInfo.environment["SYNCBENCH_TRANSPORTS"] != nil {
    var figures: [Bool: (push: [Double], pull: [Double], noop: [Double], hundred: [Double])] = [false: ([], [], [], []), true: ([], [], [], [])]
    for round in 0..<3 {
        // ABBA: which goes first alternates, so neither always runs on a warmer server.
        for overURLSession in round % 2 == 0 ? [false, true] : [true, false] {
            let name = "\(dataset)-\(overURLSession ? "urlsession" : "curl")-\(round)"
            let a = try store("\(name)-a.store", dataset: name), b = try store("\(name)-b.store", dataset: name)
            try fill(a, count: changes)
            let syncA = try engine(a, overURLSession: overURLSession), syncB = try engine(b, overURLSession: overURLSession)
            var pushed = 0, pulled = 0
            let push = try await seconds { pushed = try await syncA.sync().pushed }
            let pull = try await seconds { pulled = try await syncB.sync().pulled }
            guard pushed == changes, pulled == changes else {
                FileHandle.standardError.write(Data("SyncBench: pushed \(pushed), pulled \(pulled); expected \(changes) each way\n".utf8))
                finish(1)
            }
            var noop = [Double](), hundred = [Double]()
            for _ in 0..<11 { noop.append(try await seconds { _ = try await syncB.sync() }) }
            for step in 0..<5 {
                try fill(a, count: 100, offset: 1_000_000 + step * 100)
                hundred.append(try await seconds { _ = try await syncA.sync() })
            }
            figures[overURLSession]!.push.append(push)
            figures[overURLSession]!.pull.append(pull)
            figures[overURLSession]!.noop.append(median(noop))
            figures[overURLSession]!.hundred.append(median(hundred))
        }
    }
    print("the engine in one process, \(changes) changes A → server → B, medians of 3 rounds run alternately (URLSession: FoundationNetworking here):")
    print("transport    A's push      B's pull      changes/s   no-op sync   100-change push")
    for overURLSession in [false, true] {
        let f = figures[overURLSession]!
        let (push, pull) = (median(f.push), median(f.pull))
        print(
            String(
                format: "%@ %6.2f s     %6.2f s     %9.0f   %6.2f ms    %6.2f ms", (overURLSession ? "URLSession" : "libcurl   ") as NSString,
                push, pull, Double(changes) / (push + pull), median(f.noop) * 1000, median(f.hundred) * 1000))
        record(
            "transport",
            [
                "urlSession": overURLSession ? 1 : 0, "pushSeconds": push, "pullSeconds": pull,
                "noopMilliseconds": median(f.noop) * 1000, "hundredMilliseconds": median(f.hundred) * 1000,
            ])
    }
    print(String(format: "raw SQLite C inserts of the same rows: %.3f s", raw))
    let (curl, session) = (figures[false]!, figures[true]!)
    print(
        String(
            format: "URLSession ÷ libcurl: whole sync %.2f×, no-op sync %.2f×, 100-change push %.2f×",
            (median(session.push) + median(session.pull)) / (median(curl.push) + median(curl.pull)),
            median(session.noop) / median(curl.noop), median(session.hundred) / median(curl.hundred)))
    finish(0)
}
let a = try store("a.store", dataset: dataset), b = try store("b.store", dataset: dataset)
try fill(a, count: changes)
// Both sides run as `tandem sync` processes: the RSS measured is the syncing client's alone.
var pushSide = (summary: "", peakMiB: 0, cpu: 0.0), pullSide = (summary: "", peakMiB: 0, cpu: 0.0)
let serverBefore = serverCPU()
let push = try await seconds { pushSide = try tandemSync("a.store") }
let serverPushed = serverCPU()
let pull = try await seconds { pullSide = try tandemSync("b.store") }
let serverPulled = serverCPU()
guard count("pushed", in: pushSide.summary) == changes, count("pulled", in: pullSide.summary) == changes else {
    FileHandle.standardError.write(Data("SyncBench: A synced \(pushSide.summary), B synced \(pullSide.summary); expected \(changes) each way\n".utf8))
    finish(1)
}
let total = push + pull
if ProcessInfo.processInfo.environment["SYNCBENCH_VERBOSE"] != nil { print("A: \(pushSide.summary)\nB: \(pullSide.summary)") }
print(
    String(
        format: "A → server → B, %d changes%@: A's sync %.2f s + B's sync %.2f s = %.2f s → %.0f changes/s (goal ≥ 50 000)",
        changes, uniqueTitles ? " (unique titles)" : "", push, pull, total, Double(changes) / total))
if let serverBefore, let serverPushed, let serverPulled {
    print(
        String(
            format: "CPU time: A %.2f s, the server during A's sync %.2f s; B %.2f s, the server during B's sync %.2f s",
            pushSide.cpu, serverPushed - serverBefore, pullSide.cpu, serverPulled - serverPushed))
} else {
    print(String(format: "CPU time of the syncing clients: A %.2f s, B %.2f s", pushSide.cpu, pullSide.cpu))
}
print(String(format: "raw SQLite C inserts of the same rows: %.3f s; sync A → B ÷ raw insert = %.1f×", raw, total / raw))
record("sync", ["pushSeconds": push, "pullSeconds": pull, "rawSeconds": raw, "peakMiB": Double(max(pushSide.peakMiB, pullSide.peakMiB))])
print("peak RSS of the syncing client (tandem sync): \(pushSide.peakMiB) MiB pushing, \(pullSide.peakMiB) MiB pulling \(changes) changes (goal ≤ 150 MB at 1 M)")
// SYNCBENCH_BOOTSTRAP=1: joining costs what the data is, not what its history was. B's sync
// above was a bootstrap from the snapshot (a store with nothing); then every record is
// updated 9 more times (10 log entries per record) and a new store C joins.
if ProcessInfo.processInfo.environment["SYNCBENCH_BOOTSTRAP"] != nil {
    print(
        String(
            format: "first sync (snapshot bootstrap) of %d records: %.2f s → %.0f records/s (goal ≥ 200 000); ÷ raw insert = %.1f× (goal ≤ 5×); peak RSS %d MiB (goal ≤ 150 MB)",
            changes, pull, Double(changes) / pull, pull / raw, pullSide.peakMiB))
    record("bootstrap", ["seconds": pull, "rawSeconds": raw, "peakMiB": Double(pullSide.peakMiB)])
    // SYNCBENCH_BOOTSTRAP_ONLY=1 stops here (for comparing runs of the first sync).
    if ProcessInfo.processInfo.environment["SYNCBENCH_BOOTSTRAP_ONLY"] != nil { finish(0) }
    // Each round changes every record's title and rank and keeps its size (the title's case
    // flips), so that C joins the same data as B did, with a longer history; SYNCBENCH_GROW=1
    // appends a character to the title instead (the records end 9 bytes longer).
    let update =
        ProcessInfo.processInfo.environment["SYNCBENCH_GROW"] != nil
        ? "UPDATE Todo SET title = title || '.', rank = rank + 1"
        : "UPDATE Todo SET title = CASE WHEN title GLOB 'todo*' THEN 'TODO' ELSE 'todo' END || substr(title, 5), rank = rank + 1"
    for _ in 1...9 {
        try a.write(author: "app") { db in try db.execute(sql: update) }
        let side = try tandemSync("a.store")
        guard count("pushed", in: side.summary) == changes else {
            FileHandle.standardError.write(Data("SyncBench: an update round pushed \(side.summary); expected \(changes)\n".utf8))
            finish(1)
        }
    }
    _ = try store("c.store", dataset: dataset)
    var joined = (summary: "", peakMiB: 0, cpu: 0.0)
    let again = try await seconds { joined = try tandemSync("c.store") }
    guard count("pulled", in: joined.summary) == changes else {
        FileHandle.standardError.write(Data("SyncBench: C synced \(joined.summary); expected \(changes) records\n".utf8))
        finish(1)
    }
    print(
        String(
            format: "first sync of the same records after 9 more updates each (%d log entries): %.2f s → %.0f records/s; ÷ the %d-entry dataset's = %.2f (goal ≤ 1.2); peak RSS %d MiB",
            changes * 10, again, Double(changes) / again, changes, again / pull, joined.peakMiB))
    record("bootstrapAfterUpdates", ["seconds": again, "firstSeconds": pull, "peakMiB": Double(joined.peakMiB)])
    finish(0)
}
// A profiled run stops here (a daemon under perf outlives the kill meant for it), and so
// does SYNCBENCH_SEQUENTIAL_ONLY.
if ProcessInfo.processInfo.environment["SYNCBENCH_PERF_DIR"] != nil || ProcessInfo.processInfo.environment["SYNCBENCH_SEQUENTIAL_ONLY"] != nil { finish(0) }
// Side by side, as two daemons run: B's `tandem daemon` (a sync every 50 ms) pulls while
// A's `tandem sync` pushes, into a dataset of their own; timed from A's start until B holds
// every row (B only inserts here, so its largest rowid is its row count).
do {
    let a2 = try store("a2.store", dataset: "bench2"), b2 = try store("b2.store", dataset: "bench2")
    try fill(a2, count: changes)
    let path = { (name: String) in directory.appending(path: name).path(percentEncoded: false) }
    let daemon = try spawnTandem(["daemon", "--store", path("b2.store"), "--server", server, "--interval", "0.05"], output: path("b2.daemon.log"))
    var daemonStopped = false
    defer { if !daemonStopped { kill(daemon, SIGKILL) } }  // never left running
    try await Task.sleep(for: .milliseconds(500))  // its first sync: nothing to pull yet
    let rows = { try b2.read { db in try Int.fetchOne(db, sql: "SELECT MAX(rowid) FROM Todo") ?? 0 } }
    let serverBefore = serverCPU()
    var pushed = (summary: "", peakMiB: 0, cpu: 0.0)
    let pushing = Task.detached { try tandemSync("a2.store") }
    let elapsed = try await seconds {
        let deadline = ContinuousClock.now + .seconds(600)
        while try rows() < changes, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
    }
    pushed = try await pushing.value
    let serverSideBySide = serverCPU()
    kill(daemon, SIGTERM)
    var status: Int32 = 0
    var usage = rusage()
    _ = wait4(daemon, &status, 0, &usage)
    running.withLock { _ = $0.remove(daemon) }
    daemonStopped = true
    let pulled = try b2.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM Todo") ?? 0 }
    guard pulled == changes, count("pushed", in: pushed.summary) == changes else {
        FileHandle.standardError.write(Data("SyncBench: side by side, A synced \(pushed.summary) and B holds \(pulled) rows; expected \(changes)\n".utf8))
        finish(1)
    }
    let daemonCPU = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    print(
        String(
            format: "side by side (B's daemon pulling while A pushes): %.2f s → %.0f changes/s; CPU: A %.2f s, B's daemon %.2f s%@",
            elapsed, Double(changes) / elapsed, pushed.cpu, daemonCPU,
            serverBefore.flatMap { before in serverSideBySide.map { String(format: ", the server %.2f s", $0 - before) } } ?? ""))
    record("sideBySide", ["seconds": elapsed])
}

// SYNCBENCH_THROUGHPUT_ONLY=1 stops here (for comparing runs of the figures above).
if ProcessInfo.processInfo.environment["SYNCBENCH_THROUGHPUT_ONLY"] != nil { finish(0) }
let syncB = try engine(b)

// No-op syncs: nothing to push or pull.
var small = [Double](), large = [Double]()
let smallStore = try store("small.store", dataset: "small")
try fill(smallStore, count: 1_000)
let syncSmall = try engine(smallStore)
_ = try await syncSmall.sync()
for _ in 0..<21 { small.append(try await seconds { _ = try await syncSmall.sync() }) }
for _ in 0..<21 { large.append(try await seconds { _ = try await syncB.sync() }) }
print(
    String(
        format: "no-op sync: median %.2f ms on a 1 k store, %.2f ms on a %d store (goal ≤ 5 ms); large ÷ small = %.2f (goal ≤ 1.2)",
        median(small) * 1000, median(large) * 1000, changes, median(large) / median(small)))

// 100 new changes on the large store vs on the small one (median of 7 rounds each).
var hundredSmall = [Double](), hundredLarge = [Double]()
for round in 0..<7 {
    try fill(smallStore, count: 100, offset: 1_000_000 + round * 100)
    try fill(b, count: 100, offset: 2_000_000 + round * 100)
    hundredSmall.append(try await seconds { _ = try await syncSmall.sync() })
    hundredLarge.append(try await seconds { _ = try await syncB.sync() })
}
print(
    String(
        format: "100 changes (median of 7): %.1f ms on the 1 k store, %.1f ms on the %d store; ratio %.2f (goal ≤ 1.5)",
        median(hundredSmall) * 1000, median(hundredLarge) * 1000, changes, median(hundredLarge) / median(hundredSmall)))

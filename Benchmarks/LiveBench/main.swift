// Live sync on loopback: edit-to-visible latency from store A through tandem-server to
// store B with two `tandem daemon` processes (live, and the polling daemon beside it), and
// the server's memory and CPU with idle waiting pulls.
// Usage: LiveBench --server URL --token TOKEN --tandem PATH [--server-pid PID] [--edits N] [--waiters N]
//   (Scripts/bench-live.sh runs it)
#if canImport(Glibc)
    import Glibc  // posix_spawn, sockets: the daemons and the waiting pulls
#endif
import Foundation
import GRDB
import Tandem
import TandemSchema

func argument(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

guard let server = argument("--server"), let token = argument("--token"), let tandem = argument("--tandem") else {
    FileHandle.standardError.write(Data("usage: LiveBench --server URL --token TOKEN --tandem PATH [--server-pid PID] [--edits N] [--waiters N]\n".utf8))
    exit(2)
}
let edits = argument("--edits").flatMap(Int.init) ?? 200
let waiters = argument("--waiters").flatMap(Int.init) ?? 1_000
let directory = FileManager.default.temporaryDirectory.appending(path: "tandem-livebench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }

let schema = Schema(entities: [Schema.Entity(name: "Todo", attributes: [Schema.Attribute(name: "title", type: .scalar(.string))])])
let record = "00000000-0000-4000-8000-000000000001"

func store(_ name: String, dataset: String) throws -> ModelContainer {
    try ModelContainer(schema: schema, configuration: ModelConfiguration(url: directory.appending(path: name), dataset: dataset))
}

/// Starts `tandem daemon` on a store; its pid.
func daemon(_ store: String, _ extra: [String]) throws -> pid_t {
    let arguments = [tandem, "daemon", "--store", directory.appending(path: store).path, "--server", server] + extra
    var environment = ProcessInfo.processInfo.environment
    environment["TANDEM_TOKEN"] = token
    environment["TANDEM_LOG_LEVEL"] = "error"
    let argv = arguments.map { strdup($0) } + [nil]
    let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { for pointer in argv + envp { free(pointer) } }
    var pid: pid_t = 0
    guard posix_spawn(&pid, arguments[0], nil, nil, argv, envp) == 0 else { throw CocoaError(.executableNotLoadable) }
    return pid
}

func stop(_ pids: [pid_t]) {
    for pid in pids { kill(pid, SIGTERM) }
    for pid in pids {
        var status: Int32 = 0
        waitpid(pid, &status, 0)
    }
}

func title(in store: ModelContainer) -> String? {
    try? store.read { db in try String.fetchOne(db, sql: "SELECT title FROM Todo WHERE \"#id\" = ?", arguments: [record]) }
}

func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
}

func percentile(_ sorted: [Double], _ p: Double) -> Double {
    sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
}

/// `count` edits of one record in A, each timed from its commit until B's file holds it.
func latencies(daemonOptions: [String], count: Int, dataset: String) throws -> [Double] {
    let a = try store("\(dataset)-a.store", dataset: dataset), b = try store("\(dataset)-b.store", dataset: dataset)
    try a.write(author: "app") { db in try db.execute(sql: "INSERT INTO Todo (\"#id\", title) VALUES (?, 'e0')", arguments: [record]) }
    let pids = [try daemon("\(dataset)-a.store", daemonOptions), try daemon("\(dataset)-b.store", daemonOptions)]
    defer { stop(pids) }
    let ready = ContinuousClock.now
    while title(in: b) != "e0" {
        guard ContinuousClock.now - ready < .seconds(60) else { throw CocoaError(.fileReadUnknown) }
        usleep(1_000)
    }
    usleep(300_000)  // both daemons settled (live: their pulls wait at the server)
    var measured: [Double] = []
    for edit in 1...count {
        let text = "e\(edit)"
        try a.write(author: "app") { db in try db.execute(sql: "UPDATE Todo SET title = ? WHERE \"#id\" = ?", arguments: [text, record]) }
        let committed = ContinuousClock.now
        while title(in: b) != text {
            guard ContinuousClock.now - committed < .seconds(120) else { throw CocoaError(.fileReadUnknown) }
            usleep(200)
        }
        measured.append(milliseconds(ContinuousClock.now - committed))
        usleep(useconds_t.random(in: 10_000...30_000))
    }
    return measured.sorted()
}

func report(_ label: String, _ sorted: [Double]) {
    print(String(format: "%@: p50 %.1f ms, p99 %.1f ms, max %.1f ms over %d edits", label, percentile(sorted, 0.5), percentile(sorted, 0.99), sorted.last ?? 0, sorted.count))
}

print("edit-to-visible latency, A → tandem-server → B, two `tandem daemon` processes (loopback)")
report("live (default)", try latencies(daemonOptions: ["--interval", "30"], count: edits, dataset: "live"))
report("polling (--no-live --interval 1)", try latencies(daemonOptions: ["--no-live", "--interval", "1"], count: max(20, edits / 4), dataset: "polled"))

// Idle waiting pulls: the server's resident memory and CPU time with `waiters` of them.
func serverStat() -> (rssKiB: Int, cpuSeconds: Double)? {
    guard let pid = argument("--server-pid"), let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
        let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let end = stat.lastIndex(of: ")")
    else { return nil }
    let rss = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }.flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true)[1]) } ?? 0
    let fields = stat[stat.index(after: end)...].split(separator: " ")
    let cpu = (Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0)
    return (rss, cpu / Double(sysconf(Int32(_SC_CLK_TCK))))
}

guard let port = URL(string: server)?.port else { exit(0) }
func connectLoopback() -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    return connected == 0 ? fd : -1
}
var limit = rlimit()
getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
limit.rlim_cur = min(limit.rlim_max, rlim_t(waiters + 256))
setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
let empty = try store("idle.store", dataset: "idle")
_ = empty
let put = Process()
put.executableURL = URL(filePath: "/usr/bin/curl")
put.arguments = ["-sf", "-o", "/dev/null", "-X", "PUT", "-H", "Authorization: Bearer \(token)", server + "/v1/datasets/idle"]
try put.run()
put.waitUntilExit()
usleep(500_000)
let before = serverStat()
var sockets: [Int32] = []
let request = "GET /v1/datasets/idle/pull?wait=30 HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer \(token)\r\n\r\n"
for _ in 0..<waiters {
    let fd = connectLoopback()
    guard fd >= 0 else { break }
    _ = request.withCString { send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
    sockets.append(fd)
}
sleep(2)
let waiting = serverStat()
sleep(10)
let rest = serverStat()
for fd in sockets { close(fd) }
if let before, let waiting, let rest {
    print(
        String(
            format: "%d idle waiting pulls: server RSS %d → %d MiB (+%.1f MiB, %.1f KiB each); server CPU at rest over 10 s: %.2f s",
            sockets.count, before.rssKiB / 1024, waiting.rssKiB / 1024, Double(waiting.rssKiB - before.rssKiB) / 1024,
            Double(waiting.rssKiB - before.rssKiB) / Double(max(sockets.count, 1)), rest.cpuSeconds - waiting.cpuSeconds))
}

import Foundation
import Testing
import TandemSchema
import TandemWire

/// The real `tandem-server` process on loopback, driven with curl: startup, users and tokens
/// from the command line, graceful SIGTERM, and kill -9 in the middle of pushes.
@Suite("tandem-server (the process)", .serialized)
struct ServerProcessTests {
    /// The executable, built next to the test bundle by `swift build --build-tests`.
    static var serverURL: URL? {
        var directory = URL(filePath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appending(path: "tandem-server")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }

    /// Runs a command to its end; returns its status and standard output.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(filePath: executable)
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// One HTTP request with curl: the status and the body.
    /// The body goes through a file: a command-line argument holds at most 128 KiB.
    static func curl(
        _ method: String, _ url: String, token: String? = nil, body: Data? = nil, key: String? = nil, maxTime: Int = 10
    ) throws -> (status: Int, body: String) {
        var arguments = ["-s", "-o", "-", "-w", "\n%{http_code}", "-X", method, "--max-time", String(maxTime), url]
        if let token { arguments += ["-H", "Authorization: Bearer \(token)"] }
        if let key { arguments += ["-H", "Idempotency-Key: \(key)"] }
        var file: URL?
        if let body {
            let path = FileManager.default.temporaryDirectory.appending(path: "tandem-curl-\(UUID().uuidString)")
            try body.write(to: path)
            file = path
            arguments += ["-H", "Content-Type: application/json", "--data-binary", "@" + path.path(percentEncoded: false)]
        }
        defer { if let file { try? FileManager.default.removeItem(at: file) } }
        let (_, output) = try run("/usr/bin/curl", arguments)
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false)
        return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
    }

    /// A running server on a free loopback port.
    final class Server {
        var process = Process()
        var port = 0
        var base: String { "http://127.0.0.1:\(port)" }

        /// `descriptors`: the soft limit on open descriptors the server starts with (the
        /// usual 1 024 of a shell or a default unit), set by a shell that then runs it.
        /// `storage`: `--data-dir DIR` or `--database URL`.
        init(storage: [String], extra: [String] = [], descriptors: Int? = nil) throws {
            let executable = try #require(ServerProcessTests.serverURL, "tandem-server is not built: run `swift build --build-tests` (Scripts/test.sh does)")
            // A random port can be taken by another suite's server: the server then exits at
            // once, and another port is tried.
            for _ in 0..<5 {
                port = Int.random(in: 20_000..<60_000)
                process = Process()
                let arguments =
                    ["serve"] + storage + ["--port", String(port), "--log-level", "error", "--requests-per-second", "0", "--max-page-size", "100000"] + extra
                if let descriptors {
                    process.executableURL = URL(filePath: "/bin/sh")
                    process.arguments = ["-c", "ulimit -Sn \(descriptors) && exec \"$0\" \"$@\"", executable.path(percentEncoded: false)] + arguments
                } else {
                    process.executableURL = executable
                    process.arguments = arguments
                }
                process.standardOutput = FileHandle.nullDevice
                // TANDEM_TEST_SERVER_LOGS=DIR keeps each server's log (DIR/PORT.log), for a failure to be read.
                if let logs = ProcessInfo.processInfo.environment["TANDEM_TEST_SERVER_LOGS"] {
                    let file = "\(logs)/\(port).log"
                    FileManager.default.createFile(atPath: file, contents: nil)
                    process.standardError = FileHandle(forWritingAtPath: file)
                    process.standardOutput = FileHandle(forWritingAtPath: file)
                } else {
                    process.standardError = FileHandle.nullDevice
                }
                try process.run()
                for _ in 0..<100 {
                    if (try? ServerProcessTests.curl("GET", base + "/health").status) == 200 { return }
                    guard process.isRunning else { break }
                    Thread.sleep(forTimeInterval: 0.05)
                }
                process.terminate()
            }
            throw CancellationError()
        }

        func kill9() {
            Darwin_kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// Adds user `ann` to the server's data (`--data-dir dataDir`, or `--database URL` with
    /// `database`) and returns a token of hers.
    static func setUp(_ dataDir: String, database: String? = nil) throws -> String {
        let executable = try #require(serverURL).path(percentEncoded: false)
        let storage = database.map { ["--database", $0] } ?? ["--data-dir", dataDir]
        #expect(try run(executable, ["users", "add", "ann"] + storage).status == 0)
        let token = try run(executable, ["tokens", "create", "ann"] + storage).output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(token.hasPrefix("tdm_"))
        return token
    }

    static func temporaryDirectory() throws -> String {
        let url = FileManager.default.temporaryDirectory.appending(path: "tandem-server-process-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url.path(percentEncoded: false)
    }

    /// The position of the newest log entry: its cursor after a pull of everything (one page).
    /// Whether the log has an entry after `cursor` (one entry pulled: cheap however long the log).
    static func hasEntries(_ base: String, after cursor: String, token: String) throws -> Bool {
        let reply = try curl("GET", base + "/v1/datasets/todos/pull?limit=1&after=\(cursor)", token: token)
        return (try? JSONDecoder().decode(PullResponse.self, from: Data(reply.body.utf8)).changes.isEmpty == false) ?? false
    }

    /// A server on `dataDir` (SQLite), or on the PostgreSQL `database` when given.
    static func startServer(_ dataDir: String, _ extra: [String] = [], descriptors: Int? = nil, database: String? = nil) throws -> Server {
        let storage = database.map { ["--database", $0] } ?? ["--data-dir", dataDir]
        for _ in 0..<5 { if let server = try? Server(storage: storage, extra: extra, descriptors: descriptors) { return server } }
        return try Server(storage: storage, extra: extra, descriptors: descriptors)
    }

    /// A limit below 1 would refuse every push or answer pulls with empty pages a client
    /// takes for the end of the log: `serve` refuses it before it opens anything.
    @Test(arguments: ["--max-page-size=0", "--max-changes-per-push=-1", "--max-body-bytes=0", "--max-clock-skew=-5"])
    func serveRefusesALimitBelowOne(_ flag: String) throws {
        let server = try #require(Self.serverURL)
        let directory = FileManager.default.temporaryDirectory.appending(path: "tandem-limits-\(UUID().uuidString)")
        let (status, _) = try Self.run(server.path(percentEncoded: false), ["serve", "--data-dir", directory.path(percentEncoded: false), "--port", "1", flag])
        #expect(status != 0)
        #expect(!FileManager.default.fileExists(atPath: directory.path(percentEncoded: false)), "nothing made")
    }

    /// `users quota`: shows the limits in force, sets a user's own (with size suffixes),
    /// goes back to the default, and refuses what it cannot take with a message.
    @Test func usersQuotaSetsShowsAndRefusesBadLimits() throws {
        let executable = try #require(Self.serverURL).path(percentEncoded: false)
        let dataDir = try Self.temporaryDirectory()
        _ = try Self.setUp(dataDir)
        let shown = try Self.run(executable, ["users", "quota", "ann", "--datasets", "5", "--bytes", "2G", "--data-dir", dataDir])
        #expect(shown.status == 0)
        #expect(shown.output.contains("datasets:        0 of 5 (own limit)") && shown.output.contains("bytes:           0 of 2147483648 (own limit)"), "\(shown.output)")
        #expect(shown.output.contains("schema versions: at most 1000 (server default"), "\(shown.output)")
        let reset = try Self.run(executable, ["users", "quota", "ann", "--bytes", "default", "--data-dir", dataDir])
        #expect(reset.output.contains("0 of 5 (own limit)") && reset.output.contains("0 of 10737418240 (server default"), "\(reset.output)")
        for bad in [["--bytes", "0"], ["--bytes", "12Q"], ["--datasets", "-3"], ["--bytes", "99999999999T"]] {
            let refused = try Self.run("/bin/sh", ["-c", "\"$0\" \"$@\" 2>&1", executable, "users", "quota", "ann", "--data-dir", dataDir] + bad)
            #expect(refused.status != 0 && refused.output.contains("--"), "\(bad): \(refused.output)")
        }
        let unknown = try Self.run("/bin/sh", ["-c", "\"$0\" \"$@\" 2>&1", executable, "users", "quota", "nobody", "--data-dir", dataDir])
        #expect(unknown.status != 0 && unknown.output.contains("no user 'nobody'"), "\(unknown.output)")
        // A mistyped data directory is said, not made into an empty database.
        let typo = dataDir + "-typo"
        let missing = try Self.run("/bin/sh", ["-c", "\"$0\" \"$@\" 2>&1", executable, "users", "quota", "ann", "--data-dir", typo])
        #expect(missing.status != 0 && missing.output.contains("no tandem-server database at"), "\(missing.output)")
        #expect(!FileManager.default.fileExists(atPath: typo))
        // serve takes sizes too.
        let server = try Self.startServer(dataDir, ["--max-bytes-per-user", "2G"])
        server.process.terminate()
        server.process.waitUntilExit()
    }

    @Test func theServerServesOnLoopbackAndStopsGracefullyOnSIGTERM() throws {
        let dataDir = try Self.temporaryDirectory()
        let token = try Self.setUp(dataDir)
        let server = try Self.startServer(dataDir)
        #expect(try Self.curl("GET", server.base + "/health").status == 200)
        #expect(try Self.curl("GET", server.base + "/v1/datasets").status == 401)
        #expect(try Self.curl("PUT", server.base + "/v1/datasets/todos", token: token).status == 201)
        #expect(try Self.curl("PUT", server.base + "/v1/datasets/todos/schema", token: token, body: try ServerHarness.schema.canonicalJSON()).status == 201)
        server.process.terminate()  // SIGTERM
        server.process.waitUntilExit()
        #expect(server.process.terminationReason == .exit && server.process.terminationStatus == 0)
        // Restarted on the same data directory: the dataset is still there.
        let again = try Self.startServer(dataDir)
        defer { again.process.terminate(); again.process.waitUntilExit() }
        #expect(try Self.curl("GET", again.base + "/v1/datasets", token: token).body.contains("\"todos\""))
    }

    /// kill -9 while pushes are in flight, several times: after each restart every batch is
    /// either wholly in the log or absent, and the database passes `PRAGMA integrity_check`.
    @Test func killingTheServerMidPushNeverLeavesHalfABatch() async throws {
        let rounds = Int(ProcessInfo.processInfo.environment["TANDEM_SERVER_CRASH_ROUNDS"] ?? "") ?? 5
        let dataDir = try Self.temporaryDirectory()
        let token = try Self.setUp(dataDir)
        var server = try Self.startServer(dataDir)
        #expect(try Self.curl("PUT", server.base + "/v1/datasets/todos", token: token).status == 201)
        #expect(try Self.curl("PUT", server.base + "/v1/datasets/todos/schema", token: token, body: try ServerHarness.schema.canonicalJSON()).status == 201)
        let batchSize = 20
        var batch = 0
        var appliedPerRound: [Int] = []
        // Enough batches that the kill, right after the first lands, cuts some off; a round
        // that landed them all anyway (a fast run, a slow poll under load) is followed by one
        // with twice as many, and rounds go on until a kill has cut some off.
        var batchesPerRound = 120
        var head = ""  // the log's last cursor, read after each restart
        var interrupted = false  // a kill cut a round's pushes off
        var round = 0
        while round < rounds || (!interrupted && round < rounds + 2) {
            defer { round += 1 }
            let base = server.base
            let first = batch
            let batches = batchesPerRound
            batch += batches
            // Pushes run on GCD threads (curl blocks), a few at a time, until the kill stops them.
            let done = DispatchGroup()
            done.enter()
            DispatchQueue.global().async {
                DispatchQueue.concurrentPerform(iterations: batches) { offset in
                    let b = first + offset
                    // Stamped with the real clock: the server refuses stamps far ahead of its own.
                    let stamp = ServerHarness.stamp(UInt64(Date().timeIntervalSince1970 * 1000))
                    let changes = (0..<batchSize).map { ServerHarness.insert("todos", b * 100 + $0, title: "batch-\(b)", at: stamp) }
                    let body = try? JSONEncoder().encode(PushRequest(schemaVersion: 1, changes: changes))
                    _ = try? ServerProcessTests.curl("POST", base + "/v1/datasets/todos/push", token: token, body: body, key: "b\(b)")
                }
                done.leave()
            }
            // Kill as soon as this round's first batch is in (an entry after the log's head as
            // of the last round): the others are still coming.
            var polls = 0
            while try Self.hasEntries(base, after: head, token: token) == false, polls < 1000 {
                polls += 1
                try await Task.sleep(for: .milliseconds(5))
            }
            server.kill9()
            await withCheckedContinuation { continuation in done.notify(queue: .global()) { continuation.resume() } }
            server = try Self.startServer(dataDir)
            var titles: [String: Int] = [:]
            var cursor = ""
            while true {
                let reply = try Self.curl("GET", server.base + "/v1/datasets/todos/pull?limit=1000&after=\(cursor)", token: token)
                let page = try JSONDecoder().decode(PullResponse.self, from: Data(reply.body.utf8))
                for entry in page.changes { if case .text(let title)? = entry.change.values["title"] { titles[title, default: 0] += 1 } }
                cursor = page.nextCursor
                if !page.hasMore { break }
            }
            head = cursor
            #expect(titles.values.allSatisfy { $0 == batchSize }, "round \(round): a batch is half applied: \(titles.filter { $0.value != batchSize })")
            appliedPerRound.append(titles.count - appliedPerRound.reduce(0, +))
            if appliedPerRound.last! < batchesPerRound { interrupted = true } else { batchesPerRound = min(batchesPerRound * 2, 480) }
        }
        // The test means something only if pushes landed and kills cut some off.
        #expect(appliedPerRound.reduce(0, +) > 0, "no push landed: \(appliedPerRound)")
        #expect(interrupted, "no kill interrupted pushes: \(appliedPerRound)")
        server.process.terminate()
        server.process.waitUntilExit()
        let check = try Self.run(
            "/usr/bin/env",
            [
                "python3", "-c",
                "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('PRAGMA integrity_check').fetchone()[0])",
                dataDir + "/tandem.sqlite",
            ])
        #expect(check.output.trimmingCharacters(in: .whitespacesAndNewlines) == "ok")
    }
}

/// `kill(2)`, named apart from the test's own symbols.
@discardableResult
func Darwin_kill(_ pid: Int32, _ signal: Int32) -> Int32 { kill(pid, signal) }

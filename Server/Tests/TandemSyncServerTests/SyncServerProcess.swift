import Foundation
import Testing

/// A real `tandem-server` on a free loopback port with its SQLite default, a user and a
/// token; stopped when released.
final class SyncServerProcess: @unchecked Sendable {
    // @unchecked Sendable: `process` is started in init and only terminated in deinit/stop;
    // Foundation's Process is safe to signal from any thread.
    var process = Process()
    private(set) var port: Int
    let dataDir: URL
    /// When set, ``start()`` serves this PostgreSQL database instead of the data directory.
    var database: String?
    let token: String
    /// More `serve` options, for the next ``start()``.
    var extraArguments: [String] = []
    var base: String { "http://127.0.0.1:\(port)" }

    static var executable: URL? {
        var directory = URL(filePath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appending(path: "tandem-server")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }

    @discardableResult
    static func run(_ executable: URL, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    /// Runs a `tandem-server` command: its exit status, standard output and error (small
    /// outputs: both are read after it exits).
    static func invoke(_ executable: URL, _ arguments: [String]) throws -> (status: Int32, output: String, error: String) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let (out, err) = (Pipe(), Pipe())
        process.standardOutput = out
        process.standardError = err
        try process.run()
        process.waitUntilExit()
        let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (process.terminationStatus, output, String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
    }

    init() throws {
        let executable = try #require(Self.executable, "tandem-server is not built: run `swift build --build-tests` (Scripts/test.sh does)")
        dataDir = FileManager.default.temporaryDirectory.appending(path: "tandem-sync-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dataDir, withIntermediateDirectories: true)
        let dir = dataDir.path(percentEncoded: false)
        try Self.run(executable, ["users", "add", "ann", "--data-dir", dir])
        token = try Self.run(executable, ["tokens", "create", "ann", "--data-dir", dir]).trimmingCharacters(in: .whitespacesAndNewlines)
        // A random port can be taken (by another suite's server running alongside): the
        // server then exits at once, and another port is tried.
        port = Int.random(in: 20_000..<60_000)
        for _ in 0..<5 {
            do { try start(); return } catch { port = Int.random(in: 20_000..<60_000) }
        }
        try start()
    }

    struct StartFailed: Error, CustomStringConvertible {
        var port: Int
        var description: String { "tandem-server did not answer on port \(port)" }
    }

    /// Starts (or restarts, after ``stop()``) the server on the same port and data.
    func start() throws {
        let executable = try #require(Self.executable)
        process = Process()
        process.executableURL = executable
        let storage = database.map { ["--database", $0] } ?? ["--data-dir", dataDir.path(percentEncoded: false)]
        process.arguments = ["serve"] + storage + ["--port", String(port), "--log-level", "error", "--requests-per-second", "0"] + extraArguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        for _ in 0..<200 {
            // Asked with this server's token (on its own data): another suite's server that
            // took the port first (this one then exits) answers 401, not a false "started".
            let probe = database == nil ? ["-H", "Authorization: Bearer \(token)", base + "/v1/capabilities"] : [base + "/health"]
            let answer = try? Self.run(URL(filePath: "/usr/bin/curl"), ["-sf", "--max-time", "1"] + probe)
            if answer?.contains(database == nil ? "protocolVersion" : "ok") == true, process.isRunning { return }
            guard process.isRunning else { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        process.terminate()
        throw StartFailed(port: port)
    }

    func stop() {
        if process.isRunning { process.terminate(); process.waitUntilExit() }
    }

    /// Runs blocking work (processes, their waits) on a thread of its own: the tests run on
    /// Swift concurrency's few threads (2 here), and in-process PostgreSQL pools starved for
    /// a minute while three suites blocked them starting servers.
    static func offThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
        }
    }

    /// A new server (``init()``), made off the test's thread.
    static func make() async throws -> SyncServerProcess {
        try await offThread { try SyncServerProcess() }
    }

    /// ``start()``, off the test's thread.
    func started() async throws {
        try await Self.offThread { try self.start() }
    }

    /// ``stop()``, off the test's thread.
    func stopped() async {
        _ = try? await Self.offThread { self.stop() }
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: dataDir)
    }
}

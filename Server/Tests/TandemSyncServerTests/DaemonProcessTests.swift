import Foundation
import Testing
import Tandem
import TandemCurl
@testable import TandemSync
import TandemSyncTestSupport

/// `tandem daemon` as a process against a real server: syncs local changes on its own,
/// stops cleanly on SIGTERM, resumes after kill -9 with nothing lost or doubled, and backs
/// off while the server is down.
@Suite("tandem daemon (the process)", .serialized)
struct DaemonProcessTests {
    /// The `tandem` CLI: `TANDEM_CLI`, else the root package's build (`swift build` at the
    /// repository's root, which Scripts/test.sh runs before this package's tests), found
    /// going up from the test bundle in Server/.build.
    static var tandem: URL? {
        if let path = ProcessInfo.processInfo.environment["TANDEM_CLI"] { return URL(filePath: path) }
        var directory = URL(filePath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<6 {
            let candidate = directory.appending(path: ".build/debug/tandem")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }

    static func daemon(store: URL, server: SyncServerProcess, interval: Double = 60) throws -> Process {
        let process = Process()
        process.executableURL = try #require(tandem, "tandem is not built: run `swift build --build-tests`")
        process.arguments = [
            "daemon", "--store", store.path(percentEncoded: false), "--server", server.base,
            "--interval", String(interval), "--max-backoff", "1",
        ]
        process.environment = ProcessInfo.processInfo.environment.merging(["TANDEM_TOKEN": server.token, "TANDEM_LOG_LEVEL": "error"]) { _, new in new }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Periods too long to count in milliseconds (1e16 s) were a crash ("Double value cannot
    /// be converted to Int64", exit 132, a backtrace); they are a usage error (exit 2).
    @Test func periodsTooLongAreAUsageErrorNotACrash() throws {
        let tandem = try #require(Self.tandem, "tandem is not built: run `swift build --build-tests`")
        for (option, value) in [("--interval", "1e16"), ("--max-backoff", "1e19"), ("--interval", "1e308")] {
            let answer = try SyncServerProcess.invoke(tandem, ["daemon", "--store", "/nonexistent.store", "--server", "http://127.0.0.1:9", option, value])
            #expect(answer.status == 2, "\(option) \(value): \(answer)")
            #expect(answer.error.contains(option) && !answer.error.contains("Fatal error"), "\(answer.error)")
        }
    }

    /// A daemon whose first sync finds the setup wrong (a URL with a path the server does not
    /// have) exits 2 with what to check, instead of retrying forever (a hostile trial); the
    /// store's change stays pending.
    @Test func aDaemonWhoseSetupIsWrongExitsWithWhatToCheck() async throws {
        let server = try await SyncServerProcess.make()
        let (url, store) = try Self.storeFile()
        try SyncFixtures.insert(store, 1, title: "waits")
        let tandem = try #require(Self.tandem, "tandem is not built: run `swift build --build-tests`")
        let process = Process()
        process.executableURL = tandem
        process.arguments = ["daemon", "--store", url.path(percentEncoded: false), "--server", server.base + "/v1", "--max-backoff", "1"]
        process.environment = ProcessInfo.processInfo.environment.merging(["TANDEM_TOKEN": server.token, "TANDEM_LOG_LEVEL": "error"]) { _, new in new }
        let errors = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try process.run()
        // Retrying forever (the bug) would hang the test: stopped after two minutes.
        let pid = process.processIdentifier
        let watchdog = Task {
            try await Task.sleep(for: .seconds(120))
            kill(pid, SIGKILL)
        }
        defer { watchdog.cancel() }
        let text = try await SyncServerProcess.offThread { () -> String in
            let data = errors.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }
        #expect(process.terminationStatus == 2 && text.contains("Check the server's URL"), "\(process.terminationStatus) \(text)")
        #expect(try SyncStatus.pendingChanges(of: store) == 1)
    }

    static func storeFile() throws -> (URL, ModelContainer) {
        let url = FileManager.default.temporaryDirectory.appending(path: "tandem-daemon-\(UUID().uuidString).store")
        return (url, try ModelContainer(schema: SyncFixtures.schema, configuration: ModelConfiguration(url: url, dataset: "todos")))
    }

    /// Pulls into `reader` until it holds `expected` records (or times out).
    static func waitFor(_ expected: Int, in reader: ModelContainer, server: SyncServerProcess, seconds: Double = 15) async throws -> Int {
        let engine = SyncEngine(container: reader, transport: try CurlTransport(baseURL: server.base), configuration: SyncConfiguration(token: { server.token }))
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            _ = try? await engine.sync()
            let count = try SyncFixtures.rows(reader).count
            if count >= expected { return count }
            try await Task.sleep(for: .milliseconds(200))
        }
        return try SyncFixtures.rows(reader).count
    }

    @Test func theDaemonSyncsLocalChangesAndStopsCleanlyOnSIGTERM() async throws {
        let server = try await SyncServerProcess.make()
        let (url, store) = try Self.storeFile()
        let daemon = try Self.daemon(store: url, server: server)
        try await Task.sleep(for: .milliseconds(300))
        for n in 1...3 { try SyncFixtures.insert(store, n, title: "t\(n)") }
        let reader = try SyncFixtures.store()
        #expect(try await Self.waitFor(3, in: reader, server: server) == 3, "the daemon pushed the local changes without being asked")
        kill(daemon.processIdentifier, SIGTERM)
        daemon.waitUntilExit()
        #expect(daemon.terminationReason == .exit && daemon.terminationStatus == 0)
    }

    /// A server that hangs (SIGSTOP) while the daemon pushes: SIGINT stops the daemon after
    /// its grace period (20 s), not after the transport's 120 s timeout (past systemd's
    /// `TimeoutStopSec=60`: a hostile trial), and the change it was pushing is pushed by the
    /// next sync once the server answers again.
    @Test func aDaemonStuckOnAHungServerStopsWithinItsGraceAndLosesNothing() async throws {
        let server = try await SyncServerProcess.make()
        let (url, store) = try Self.storeFile()
        let daemon = try Self.daemon(store: url, server: server)
        let reader = try SyncFixtures.store()
        try SyncFixtures.insert(store, 1, title: "before")
        #expect(try await Self.waitFor(1, in: reader, server: server) == 1)
        kill(server.process.processIdentifier, SIGSTOP)
        try SyncFixtures.insert(store, 2, title: "pushed into a hung server")
        try await Task.sleep(for: .seconds(2))
        let signalled = ContinuousClock.now
        kill(daemon.processIdentifier, SIGINT)
        try await SyncServerProcess.offThread { daemon.waitUntilExit() }
        let stopping = ContinuousClock.now - signalled
        kill(server.process.processIdentifier, SIGCONT)
        #expect(daemon.terminationReason == .exit && daemon.terminationStatus == 0)
        // 20 s and a cancellation noticed (seconds on a loaded machine), against 120 s.
        #expect(stopping < .seconds(80), "stopped after \(stopping)")
        // The server may take the cut push's request when it wakes: the key makes it once.
        let engine = SyncEngine(container: store, transport: try CurlTransport(baseURL: server.base), configuration: SyncConfiguration(token: { server.token }))
        _ = try await engine.sync()
        #expect(try SyncStatus.pendingChanges(of: store) == 0)
        #expect(try await Self.waitFor(2, in: reader, server: server, seconds: 120) == 2)
    }

    @Test func killedAtRandomMomentsTheDaemonResumesAndLosesAndDoublesNothing() async throws {
        let rounds = ProcessInfo.processInfo.environment["TANDEM_DAEMON_CRASH_ROUNDS"].flatMap(Int.init) ?? 6
        let server = try await SyncServerProcess.make()
        let (url, store) = try Self.storeFile()
        var n = 0
        for _ in 0..<rounds {
            let daemon = try Self.daemon(store: url, server: server, interval: 0.2)
            for _ in 0..<20 {
                n += 1
                try SyncFixtures.insert(store, n, title: "t\(n)")
                if n % 3 == 0 { try SyncFixtures.update(store, n - 1, "rank", n) }
                if n % 7 == 0 { try SyncFixtures.delete(store, n - 2) }
            }
            try await Task.sleep(for: .milliseconds(Int.random(in: 50...400)))
            kill(daemon.processIdentifier, SIGKILL)
            daemon.waitUntilExit()
        }
        let last = try Self.daemon(store: url, server: server, interval: 0.2)
        let reader = try SyncFixtures.store()
        let expected = try SyncFixtures.rows(store)
        _ = try await Self.waitFor(expected.count, in: reader, server: server)
        try await Task.sleep(for: .milliseconds(500))
        _ = try await Self.waitFor(expected.count, in: reader, server: server, seconds: 2)
        kill(last.processIdentifier, SIGTERM)
        last.waitUntilExit()
        #expect(try SyncFixtures.rows(reader) == expected, "the server holds exactly the store's records: nothing lost, doubled or resurrected")
        #expect(try SyncStatus(of: store).pendingChanges == 0)
    }

    @Test func whileTheServerIsDownTheDaemonBacksOffAndSyncsWhenItReturns() async throws {
        let server = try await SyncServerProcess.make()
        let (url, store) = try Self.storeFile()
        let daemon = try Self.daemon(store: url, server: server, interval: 0.5)
        defer { kill(daemon.processIdentifier, SIGTERM); daemon.waitUntilExit() }
        try await Task.sleep(for: .milliseconds(300))
        await server.stopped()
        try SyncFixtures.insert(store, 1, title: "written while the server was down")
        try await Task.sleep(for: .seconds(2))
        #expect(daemon.isRunning, "an unreachable server is not a reason to exit")
        try await server.started()
        let reader = try SyncFixtures.store()
        #expect(try await Self.waitFor(1, in: reader, server: server) == 1)
    }
}

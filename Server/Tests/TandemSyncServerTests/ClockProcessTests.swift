import Foundation
import Testing
import Tandem
import TandemCurl
import TandemSchema
@testable import TandemSync
import TandemSyncTestSupport

/// Machines whose clocks are wrong, as real `tandem` processes under `faketime` against a
/// real server: nothing they write is lost, and their replica is never poisoned.
@Suite(
    "Clocks that lie (tandem processes under faketime)", .serialized,
    // A tandem built with a sanitizer hangs at start under faketime's LD_PRELOAD (both hook
    // the process's start; `faketime -f +1d tandem --help` never returns): Scripts/sanitize.sh
    // sets TANDEM_SANITIZER, and the clock's handling runs sanitized in the in-process suites.
    .disabled(if: ProcessInfo.processInfo.environment["TANDEM_SANITIZER"] != nil, "sanitized binaries hang under faketime"))
struct ClockProcessTests {
    struct Run {
        var status: Int32
        var output: String
        var errors: String
    }

    static var faketime: String? {
        ["/usr/bin/faketime", "/usr/local/bin/faketime"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Runs `tandem arguments` with the clock moved by `shift` (faketime's `+1d`, `-1d`; `nil`:
    /// the real clock). The boot clock is left alone, as NTP or a user fixing the clock would.
    static func tandem(_ arguments: [String], shift: String? = nil, server: SyncServerProcess? = nil) throws -> Run {
        let tandem = try #require(DaemonProcessTests.tandem, "tandem is not built: run `swift build --build-tests`")
        var environment = ProcessInfo.processInfo.environment
        if let server {
            environment["TANDEM_TOKEN"] = server.token
            environment["TANDEM_SERVER"] = server.base
        }
        let run: ChildProcess
        if let shift {
            let faketime = try #require(Self.faketime, "faketime is not installed (Scripts/install-deps.sh installs it)")
            environment["FAKETIME_DONT_FAKE_MONOTONIC"] = "1"
            run = try ChildProcess.run(URL(filePath: faketime), ["-f", shift, tandem.path(percentEncoded: false)] + arguments, environment: environment)
        } else {
            run = try ChildProcess.run(tandem, arguments, environment: environment)
        }
        return Run(status: run.status, output: run.out, errors: run.err)
    }

    static func put(_ url: URL, _ n: Int, _ json: String, shift: String? = nil) throws {
        let run = try tandem(["records", "put", "--store", url.path(percentEncoded: false), "--entity", "Todo", "--id", SyncFixtures.id(n), json], shift: shift)
        #expect(run.status == 0, "put failed: \(run.errors)")
    }

    static func sync(_ url: URL, server: SyncServerProcess, shift: String? = nil) throws -> Run {
        try tandem(["sync", "--store", url.path(percentEncoded: false)], shift: shift, server: server)
    }

    static func now() -> UInt64 { UInt64(Date().timeIntervalSince1970 * 1000) }

    @Test func anEditMadeADayAheadIsStampedAgainPushedAndDoesNotPoisonLaterEdits() async throws {
        let server = try await SyncServerProcess.make()
        let (urlA, a) = try DaemonProcessTests.storeFile()
        let (urlB, b) = try DaemonProcessTests.storeFile()
        try SyncFixtures.insert(a, 1, title: "one", rank: 1)
        try SyncFixtures.insert(a, 2, title: "two", rank: 2)
        #expect(try Self.sync(urlA, server: server).status == 0)
        #expect(try Self.sync(urlB, server: server).status == 0)

        // A's clock runs a day ahead: its edit is refused at first, then stamped again with
        // the server's time and pushed in the same sync.
        try Self.put(urlA, 1, #"{"title": "edited a day ahead"}"#, shift: "+1d")
        let ahead = try Self.sync(urlA, server: server, shift: "+1d")
        #expect(ahead.status == 0, "the sync failed: \(ahead.output) \(ahead.errors)")
        #expect(ahead.output.contains("pushed 1"), "\(ahead.output)")
        #expect(try SyncStatus(of: a).pendingChanges == 0 && SyncStatus(of: a).quarantined == 0)
        #expect(try #require(try a.latestStamp()).physical < Self.now() + 6 * 60_000, "the store's clock came back to the server's time")

        // Still a day ahead: new edits are stamped with the server's time, so none is refused.
        try Self.put(urlA, 2, #"{"title": "still ahead"}"#, shift: "+1d")
        #expect(try Self.sync(urlA, server: server, shift: "+1d").status == 0)
        // The clock corrected: the next edit is not refused either.
        try Self.put(urlA, 2, #"{"rank": 22}"#)
        let corrected = try Self.sync(urlA, server: server)
        #expect(corrected.status == 0 && corrected.output.contains("pushed 1"), "\(corrected.output) \(corrected.errors)")

        #expect(try Self.sync(urlB, server: server).status == 0)
        #expect(try SyncFixtures.rows(b) == SyncFixtures.rows(a))
        #expect(try SyncFixtures.rows(b)[SyncFixtures.id(1)] == ["edited a day ahead", "1"])
        #expect(try SyncFixtures.rows(b)[SyncFixtures.id(2)] == ["still ahead", "22"])

        // B edits record 1 after A did, in real time: B's edit wins, although A's clock said
        // tomorrow when A made its own.
        try Self.put(urlB, 1, #"{"title": "later, from B"}"#)
        #expect(try Self.sync(urlB, server: server).status == 0)
        #expect(try Self.sync(urlA, server: server).status == 0)
        #expect(try SyncFixtures.rows(a)[SyncFixtures.id(1)] == ["later, from B", "1"])
    }

    @Test func anEditJustPastTheToleranceIsNotLost() async throws {
        let server = try await SyncServerProcess.make()
        let (urlA, a) = try DaemonProcessTests.storeFile()
        let (urlB, b) = try DaemonProcessTests.storeFile()
        try SyncFixtures.insert(a, 1, title: "one", rank: 1)
        #expect(try Self.sync(urlA, server: server).status == 0)
        // Accepted just inside the tolerance (5 min), then one 5 s past it, of the same column:
        // the later edit must win, not lose to the earlier one.
        try Self.put(urlA, 1, #"{"title": "inside"}"#, shift: "+295s")
        #expect(try Self.sync(urlA, server: server, shift: "+295s").status == 0)
        try SQLiteSupport.forgetServerClock(a)  // as if it never learned the server's time
        try Self.put(urlA, 1, #"{"title": "past the tolerance"}"#, shift: "+305s")
        let run = try Self.sync(urlA, server: server, shift: "+305s")
        #expect(run.status == 0, "\(run.output) \(run.errors)")
        #expect(try Self.sync(urlB, server: server).status == 0)
        #expect(try SyncFixtures.rows(b)[SyncFixtures.id(1)] == ["past the tolerance", "1"])
        #expect(try SyncStatus(of: a).pendingChanges == 0)
    }

    @Test func aClockADayBehindStillWinsWithEditsMadeAfterItLastSynced() async throws {
        let server = try await SyncServerProcess.make()
        let (urlA, a) = try DaemonProcessTests.storeFile()
        let (urlB, b) = try DaemonProcessTests.storeFile()
        try SyncFixtures.insert(b, 1, title: "one", rank: 1)
        #expect(try Self.sync(urlB, server: server).status == 0)
        let first = try Self.sync(urlA, server: server, shift: "-1d")
        #expect(first.status == 0)
        #expect(first.errors.contains("behind"), "the sync warns of the clock: \(first.errors)")
        let status = try Self.tandem(["status", "--store", urlA.path(percentEncoded: false)], shift: "-1d")
        #expect(status.output.contains("s behind the server's"), "\(status.output)")

        // B edits, then A (a day behind by its clock, later in real time) edits the same
        // column before pulling B's edit: A's edit is the later one and wins everywhere.
        try Self.put(urlB, 1, #"{"title": "from B"}"#)
        #expect(try Self.sync(urlB, server: server).status == 0)
        try await Task.sleep(for: .milliseconds(20))
        try Self.put(urlA, 1, #"{"title": "from A, later"}"#, shift: "-1d")
        #expect(try Self.sync(urlA, server: server, shift: "-1d").status == 0)
        #expect(try Self.sync(urlB, server: server).status == 0)
        #expect(try SyncFixtures.rows(a)[SyncFixtures.id(1)] == ["from A, later", "1"])
        #expect(try SyncFixtures.rows(b)[SyncFixtures.id(1)] == ["from A, later", "1"])
        #expect(
            try SyncStatus.conflicts(of: a).contains { $0.remoteValue == #""from B""# && $0.winner == .local },
            "B's value that lost is in the conflict log of A, whose value beat it")
    }
}

/// Direct edits of a store's metadata, for setting up what a test needs.
enum SQLiteSupport {
    static func forgetServerClock(_ store: ModelContainer) throws {
        try store.write { db in try db.execute(sql: "DELETE FROM tandem_metadata WHERE key = 'serverClock'") }
    }
}

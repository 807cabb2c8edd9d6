import Foundation
import Logging
import Synchronization
import Tandem
import Testing
@testable import TandemSync
import TandemSyncTestSupport

/// Cancelling the task that runs a sync loop (an app going to the background) ends the loop
/// without reporting a failure: a cancellation is not a sync that failed.
@Suite("Cancelling a sync loop")
struct SyncLoopCancellationTests {
    enum Loop: String, CaseIterable, Sendable { case every, live }

    /// How many exchanges an engine of ``hanging()`` started.
    final class Asked: Sendable {
        let count = Atomic<Int>(0)
        var value: Int { count.load(ordering: .relaxed) }
    }

    /// An engine whose every exchange waits for an answer that comes only after an hour: it
    /// is in the middle of a sync when it is cancelled.
    static func hanging() throws -> (engine: SyncEngine, asked: Asked) {
        let asked = Asked()
        let transport = MemoryTransport { _ in
            asked.count.add(1, ordering: .relaxed)
            try await Task.sleep(for: .seconds(3_600))
            return TransportResponse(status: 500)
        }
        let engine = SyncEngine(
            container: try SyncFixtures.store(), transport: transport, configuration: SyncConfiguration(token: { "t" }),
            logger: Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() }))
        return (engine, asked)
    }

    /// Waits (two minutes at most) until `asked` counts an exchange.
    static func untilAsked(_ asked: Asked) async throws {
        let deadline = ContinuousClock.now + .seconds(120)
        while asked.value == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
    }

    @Test(arguments: Loop.allCases)
    func aCancelledLoopEndsWithoutReportingAFailure(_ loop: Loop) async throws {
        let (engine, asked) = try Self.hanging()
        let reported = Mutex<[Result<SyncSummary, SyncError>]>([])
        let onSync: @Sendable (Result<SyncSummary, SyncError>) -> Void = { result in reported.withLock { $0.append(result) } }
        let running = Task {
            switch loop {
            case .every: await engine.run(every: .seconds(600), onSync: onSync)
            case .live: await engine.runLive(every: .seconds(600), onSync: onSync)
            }
        }
        try await Self.untilAsked(asked)
        let started = asked.value
        try #require(started > 0, "the loop started a sync")
        running.cancel()
        await running.value
        #expect(reported.withLock { $0 }.isEmpty, "nothing reported: \(reported.withLock { $0 })")
    }

    /// A caller waiting for another's sync to end (one sync at a time) and cancelled stops
    /// waiting at once; the other sync goes on.
    @Test func aCallerCancelledWhileWaitingForAnotherSyncStopsWaiting() async throws {
        let (engine, asked) = try Self.hanging()
        let first = Task { try await engine.sync() }
        try await Self.untilAsked(asked)
        let outcome = Mutex<(any Error)?>(nil)
        let ended = Atomic<Bool>(false)
        let second = Task {
            do { _ = try await engine.sync() } catch { outcome.withLock { $0 = error } }
            ended.store(true, ordering: .relaxed)
        }
        try await Task.sleep(for: .milliseconds(50))  // it waits behind the first (if not yet, it stops as it comes)
        second.cancel()
        let cancelled = ContinuousClock.now
        while !ended.load(ordering: .relaxed), ContinuousClock.now - cancelled < .seconds(60) { try await Task.sleep(for: .milliseconds(5)) }
        let stopped = ended.load(ordering: .relaxed), error = outcome.withLock { $0 }, exchanges = asked.value
        #expect(stopped, "the cancelled caller stopped waiting while the other sync runs")
        #expect(error is CancellationError, "\(String(describing: error))")
        #expect(exchanges == 1, "the other sync still waits for its answer")
        first.cancel()
        await #expect(throws: CancellationError.self) { try await first.value }
        await second.value
    }
}

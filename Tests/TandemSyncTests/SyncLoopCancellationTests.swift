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

    @Test(arguments: Loop.allCases)
    func aCancelledLoopEndsWithoutReportingAFailure(_ loop: Loop) async throws {
        let store = try SyncFixtures.store()
        let asked = Atomic<Int>(0)
        // Every exchange waits for an answer that comes only after an hour: the loop is in the
        // middle of a sync when it is cancelled.
        let transport = MemoryTransport { _ in
            asked.add(1, ordering: .relaxed)
            try await Task.sleep(for: .seconds(3_600))
            return TransportResponse(status: 500)
        }
        let engine = SyncEngine(
            container: store, transport: transport, configuration: SyncConfiguration(token: { "t" }),
            logger: Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() }))
        let reported = Mutex<[Result<SyncSummary, SyncError>]>([])
        let onSync: @Sendable (Result<SyncSummary, SyncError>) -> Void = { result in reported.withLock { $0.append(result) } }
        let running = Task {
            switch loop {
            case .every: await engine.run(every: .seconds(600), onSync: onSync)
            case .live: await engine.runLive(every: .seconds(600), onSync: onSync)
            }
        }
        let deadline = ContinuousClock.now + .seconds(120)
        while asked.load(ordering: .relaxed) == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        try #require(asked.load(ordering: .relaxed) > 0, "the loop started a sync")
        running.cancel()
        await running.value
        #expect(reported.withLock { $0 }.isEmpty, "nothing reported: \(reported.withLock { $0 })")
    }
}

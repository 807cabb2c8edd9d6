import Foundation
import TandemLocking
import Testing
import TandemSync

/// The fault injector itself: each fault happens, and the same seed gives the same faults.
@Suite("Faulty transport")
struct FaultyTransportTests {
    /// Counts the requests that reach the "server".
    final class Counter: Sendable {
        let count = Locked(0)
    }

    static func base(_ counter: Counter) -> MemoryTransport {
        MemoryTransport { _ in
            counter.count.withLock { $0 += 1 }
            return TransportResponse(status: 200, headers: [:], body: Data())
        }
    }

    static let request = TransportRequest(method: "GET", path: "/v1/health", headers: [:], body: nil)

    /// What each of `n` requests met: "ok", "dropped" or "cut", and how many reached the base.
    static func outcomes(seed: UInt64, faults: FaultyTransport.Faults, n: Int = 200) async -> ([String], Int) {
        let counter = Counter()
        let faulty = FaultyTransport(wrapping: base(counter), seed: seed, faults: faults)
        var result: [String] = []
        for _ in 0..<n {
            do {
                _ = try await faulty.send(request)
                result.append("ok")
            } catch let error as SyncError {
                result.append(error.message.contains("dropped") ? "dropped" : "cut")
            } catch {
                result.append("other")
            }
        }
        return (result, counter.count.withLock { $0 })
    }

    @Test func theSameSeedGivesTheSameFaults() async {
        let faults = FaultyTransport.Faults(drop: 0.2, cutAfterCommit: 0.2, duplicate: 0.2, delay: 0.2, maxDelay: .microseconds(200))
        let first = await Self.outcomes(seed: 7, faults: faults)
        let again = await Self.outcomes(seed: 7, faults: faults)
        let other = await Self.outcomes(seed: 8, faults: faults)
        #expect(first.0 == again.0 && first.1 == again.1)
        #expect(first.0 != other.0, "another seed, other faults")
        #expect(first.0.contains("dropped") && first.0.contains("cut") && first.0.contains("ok"))
        // Dropped requests never reach the base; duplicated ones reach it twice.
        let reached = first.0.filter { $0 != "dropped" }.count
        #expect(first.1 > reached, "some requests were sent twice")
    }

    @Test func delayedRequestsWaitUpToTheMaximum() async throws {
        let counter = Counter()
        let faulty = FaultyTransport(wrapping: Self.base(counter), seed: 3, faults: .init(delay: 1, maxDelay: .milliseconds(40)))
        let clock = ContinuousClock()
        var waits: [Duration] = []
        for _ in 0..<5 {
            let start = clock.now
            _ = try await faulty.send(Self.request)
            waits.append(clock.now - start)
        }
        #expect(faulty.injected == 5)
        #expect(waits.reduce(.zero, +) > .milliseconds(20), "five random waits of up to 40 ms: \(waits)")
        faulty.isEnabled = false
        _ = try await faulty.send(Self.request)
        #expect(faulty.injected == 5, "no fault once disabled")
        #expect(counter.count.withLock { $0 } == 6)
    }
}

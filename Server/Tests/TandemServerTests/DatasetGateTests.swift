import Foundation
import NIOConcurrencyHelpers
import Testing
import TandemServer
@testable import TandemServerPostgres

/// The per-dataset gate, with no database: one push per dataset at a time, in arrival order,
/// other datasets not held up, and a bounded wait.
struct DatasetGateTests {
    @Test func pushesToOneDatasetRunOneAtATimeInArrivalOrderAndOthersRunBeside() async throws {
        let gate = DatasetGate()
        let log = NIOLockedValueBox<[String]>([])
        let inside = NIOLockedValueBox(0)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<5 {
                group.addTask {
                    try await gate.run(1, deadline: .seconds(30)) {
                        let now = inside.withLockedValue {
                            $0 += 1; return $0
                        }
                        #expect(now == 1, "two pushes of dataset 1 at once")
                        log.withLockedValue { $0.append("1:\(i)") }
                        try await Task.sleep(for: .milliseconds(20))
                        inside.withLockedValue { $0 -= 1 }
                    }
                }
                try await Task.sleep(for: .milliseconds(2))  // arrival order 0, 1, 2…
            }
            group.addTask { try await gate.run(2, deadline: .seconds(30)) { log.withLockedValue { $0.append("2") } } }
            try await group.waitForAll()
        }
        let order = log.withLockedValue { $0 }
        #expect(order.filter { $0.hasPrefix("1:") } == (0..<5).map { "1:\($0)" })
        #expect(order.firstIndex(of: "2")! < order.firstIndex(of: "1:4")!, "dataset 2 did not wait for dataset 1")
    }

    @Test func aPushWaitingPastItsDeadlineIsRefusedAndTheNextGoesOn() async throws {
        let gate = DatasetGate()
        let entered = NIOLockedValueBox(false)
        let release = NIOLockedValueBox(false)
        async let holder: Void = gate.run(1, deadline: .seconds(30)) {
            entered.withLockedValue { $0 = true }
            while !release.withLockedValue({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
        }
        while !entered.withLockedValue({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
        await #expect(throws: StorageError.self) { try await gate.run(1, deadline: .milliseconds(50)) {} }
        release.withLockedValue { $0 = true }
        try await holder
        let after = try await gate.run(1, deadline: .seconds(30)) { 7 }
        #expect(after == 7, "the gate is free once the holder leaves")
    }
}

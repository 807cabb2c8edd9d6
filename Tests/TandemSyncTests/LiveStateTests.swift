import Foundation
import Testing
import Tandem
import TandemWire
@testable import TandemSync

/// The live loop's decisions, with no I/O: when a sync is due, when a pull may wait, how
/// failures back off.
@Suite("Live sync state")
struct LiveStateTests {
    let start = ContinuousClock.now
    let backoff = Backoff(base: .seconds(1), maximum: .seconds(8))

    struct Fixed: RandomNumberGenerator {
        mutating func next() -> UInt64 { UInt64.max / 2 }
    }

    static func page(_ entries: Int, cursor: String) -> PullResponse {
        let change = WireChange(record: "tandem://todos/Todo/00000000-0000-0000-0000-000000000001", entity: "Todo", kind: .delete, values: [:], stamps: [:])
        return PullResponse(
            changes: (0..<entries).map { LogEntry(position: Int64($0 + 1), change: change, schemaVersion: 1) }, nextCursor: cursor, hasMore: false,
            serverTime: 0)
    }

    @Test func theFirstSyncIsDueAtOnceAndPullsWaitOnlyAfterIt() {
        var live = LiveState(interval: .seconds(30))
        #expect(live.syncDue(now: start))
        #expect(!live.mayWait(now: start), "no waiting before the first sync")
        live.synced(through: .start, now: start)
        #expect(!live.syncDue(now: start + .seconds(29)))
        #expect(live.mayWait(now: start))
        #expect(live.syncDue(now: start + .seconds(30)), "the full sync of every interval")
    }

    @Test func aPageWithNewsMakesASyncDueAndIsHandedToIt() {
        var live = LiveState(interval: .seconds(30))
        live.synced(through: .start, now: start)
        live.pulled(from: "c1", Self.page(0, cursor: "c1"), now: start)
        #expect(!live.syncDue(now: start), "an ended wait with nothing new syncs nothing")
        #expect(live.takePrefetched() == nil)
        live.pulled(from: "c1", Self.page(2, cursor: "c2"), now: start)
        #expect(live.syncDue(now: start))
        #expect(live.takePrefetched()?.page.changes.count == 2)
        #expect(live.takePrefetched() == nil, "handed over once")
        live.pulled(from: "c2", Self.page(0, cursor: "c3"), now: start)
        #expect(live.syncDue(now: start), "a cursor that moved is news too")
    }

    @Test func failedSyncsBackOffAndStopWaitingUntilOneSucceeds() {
        var live = LiveState(interval: .seconds(30))
        var random = Fixed()
        let first = live.failed(SyncError(.unreachable, "down"), backoff: backoff, now: start, using: &random)
        #expect(!live.healthy && !live.mayWait(now: start + .seconds(100)))
        #expect(!live.syncDue(now: start + first - .milliseconds(1)))
        #expect(live.syncDue(now: start + first))
        let second = live.failed(SyncError(.unreachable, "down"), backoff: backoff, now: start + first, using: &random)
        #expect(second > first, "exponential")
        var refused = SyncError(.serverUnavailable, "busy")
        refused.retryAfter = 20
        let told = live.failed(refused, backoff: backoff, now: start, using: &random)
        #expect(told >= .seconds(20), "the server's Retry-After is honoured")
        live.synced(through: .start, now: start + .seconds(60))
        #expect(live.healthy && live.mayWait(now: start + .seconds(60)))
    }

    @Test func aFailedWaitSyncsAtOnceAndWaitsAgainOnlyAfterAPause() {
        var live = LiveState(interval: .seconds(30))
        var random = Fixed()
        live.synced(through: .start, now: start)
        var refused = SyncError(.serverUnavailable, "too_many_waiting")
        refused.retryAfter = 5
        let pause = live.waitFailed(refused, backoff: backoff, now: start, using: &random)
        #expect(pause >= .seconds(5))
        #expect(live.syncDue(now: start), "a full sync says what is wrong")
        live.synced(through: .start, now: start)
        #expect(!live.mayWait(now: start + .seconds(4)), "not asked again at once")
        #expect(live.mayWait(now: start + pause))
        live.pulled(from: "c", Self.page(0, cursor: "c"), now: start + pause)
        #expect(live.mayWait(now: start + pause))
    }

    @Test func aLocalChangeMakesASyncDue() {
        var live = LiveState(interval: .seconds(30))
        live.synced(through: HistoryToken(rawValue: 7), now: start)
        #expect(live.synced == HistoryToken(rawValue: 7))
        live.localChange()
        #expect(live.syncDue(now: start) && !live.mayWait(now: start))
    }
}

import Testing
import TandemSchema

@Suite("Hybrid logical clock")
struct HybridLogicalClockTests {
    @Test func stampsNeverGoBackWhenTheWallClockDoes() {
        var clock = HybridLogicalClock(node: 7)
        let a = clock.tick(now: 1_000)
        let b = clock.tick(now: 999)
        let c = clock.tick(now: 1_000)
        let d = clock.tick(now: 1_001)
        #expect(a < b && b < c && c < d)
        #expect(b == HLCTimestamp(physical: 1_000, counter: 1, node: 7))
        #expect(d == HLCTimestamp(physical: 1_001, counter: 0, node: 7))
    }

    @Test func aReceivedStampOrdersLaterLocalEventsAfterIt() {
        var clock = HybridLogicalClock(node: 1)
        _ = clock.tick(now: 100)
        let remote = HLCTimestamp(physical: 5_000, counter: 3, node: 2)
        clock.receive(remote, now: 200)
        #expect(clock.tick(now: 300) > remote)
    }

    @Test func counterOverflowMovesToTheNextMillisecond() {
        var clock = HybridLogicalClock(node: 1, last: HLCTimestamp(physical: 10, counter: .max, node: 1))
        #expect(clock.tick(now: 10) == HLCTimestamp(physical: 11, counter: 0, node: 1))
    }

    @Test func textFormSortsLikeStampsAndParsesBack() throws {
        let stamps = [
            HLCTimestamp(physical: 2, counter: 0, node: 1), HLCTimestamp(physical: 1, counter: 9, node: 5),
            HLCTimestamp(physical: 1, counter: 9, node: 4), HLCTimestamp(physical: 0x0199cc5a4000, counter: 1, node: .max),
        ]
        #expect(stamps.sorted() == stamps.sorted { $0.description < $1.description })
        for stamp in stamps { #expect(HLCTimestamp(stamp.description) == stamp) }
        #expect(HLCTimestamp("0199cc5a4000-0001-ffffffffffffffff") == stamps[3])
        #expect(HLCTimestamp("nope") == nil)
        #expect(HLCTimestamp("0199cc5a4000-0001-FFFFFFFFFFFFFFFF") == nil)  // lowercase only, so text order holds
        // Read in place from substrings too; every wrong width, separator or digit is refused.
        let text = "[0199cc5a4000-0001-ffffffffffffffff]"
        #expect(HLCTimestamp(text.dropFirst().dropLast()) == stamps[3])
        for bad in [
            "", "0199cc5a4000-0001-fffffffffffffff", "0199cc5a4000-0001-ffffffffffffffff0", "0199cc5a4000_0001-ffffffffffffffff",
            "0199cc5a4000-0001+ffffffffffffffff", "0199cc5a400g-0001-ffffffffffffffff", "0199cc5a4000-0001-fffffffffffffff\u{e9}",
            "ｆ199cc5a4000-0001-ffffffffffffffff",
        ] {
            #expect(HLCTimestamp(bad) == nil, "\(bad)")
        }
    }
}

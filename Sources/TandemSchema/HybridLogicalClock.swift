/// The hybrid logical clock of one node: pure logic, the physical time is passed in.
///
/// `tick` stamps a local event; `receive` merges a remote stamp so later local events sort
/// after it. Both never go backwards, even when the wall clock does.
///
/// ```swift
/// var clock = HybridLogicalClock(node: 7)
/// let a = clock.tick(now: 1_000)       // 1000/0/7
/// let b = clock.tick(now: 999)         // 1000/1/7: the wall clock went back, the stamp did not
/// ```
public struct HybridLogicalClock: Sendable, Hashable {
    public let node: UInt64
    /// The latest stamp issued or received.
    public private(set) var last: HLCTimestamp

    public init(node: UInt64, last: HLCTimestamp? = nil) {
        self.node = node
        self.last = last ?? HLCTimestamp(physical: 0, counter: 0, node: node)
    }

    /// A new stamp for a local event, later than every stamp seen so far.
    public mutating func tick(now: UInt64) -> HLCTimestamp {
        if now > last.physical {
            last = HLCTimestamp(physical: now, counter: 0, node: node)
        } else if last.counter == .max {
            last = HLCTimestamp(physical: last.physical + 1, counter: 0, node: node)
        } else {
            last = HLCTimestamp(physical: last.physical, counter: last.counter + 1, node: node)
        }
        return last
    }

    /// Accounts for a stamp received from another node, so the next tick sorts after it.
    public mutating func receive(_ remote: HLCTimestamp, now: UInt64) {
        let physical = max(now, last.physical, remote.physical)
        var counter: UInt16 = 0
        if physical == last.physical && physical == remote.physical {
            counter = max(last.counter, remote.counter)
        } else if physical == last.physical {
            counter = last.counter
        } else if physical == remote.physical {
            counter = remote.counter
        }
        last = HLCTimestamp(physical: physical, counter: counter, node: node)
    }
}

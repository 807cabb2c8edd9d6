import TandemLocking

/// A ``Transport`` that misbehaves on purpose, for tests: it drops requests before they
/// reach the server, loses answers after the server acted on them, sends requests twice,
/// and delays them, at random with a seed (the same seed, the same faults).
///
/// ```swift
/// let faulty = FaultyTransport(wrapping: transport, seed: 42,
///                              faults: .init(drop: 0.1, cutAfterCommit: 0.1, duplicate: 0.1, delay: 0.1, maxDelay: .milliseconds(5)))
/// faulty.isEnabled = false   // behave, for the final rounds
/// ```
public final class FaultyTransport: Transport {
    /// How often each fault happens (0…1).
    public struct Faults: Sendable, Hashable {
        public var drop: Double
        public var cutAfterCommit: Double
        public var duplicate: Double
        /// How often a request waits before it is sent, up to `maxDelay`.
        public var delay: Double
        public var maxDelay: Duration
        public init(drop: Double = 0, cutAfterCommit: Double = 0, duplicate: Double = 0, delay: Double = 0, maxDelay: Duration = .milliseconds(20)) {
            self.drop = drop
            self.cutAfterCommit = cutAfterCommit
            self.duplicate = duplicate
            self.delay = delay
            self.maxDelay = maxDelay
        }
    }

    let base: any Transport
    let faults: Faults
    private let state: Locked<(random: SplitMix64, enabled: Bool, injected: Int)>

    public init(wrapping base: any Transport, seed: UInt64, faults: Faults) {
        self.base = base
        self.faults = faults
        state = Locked((SplitMix64(seed: seed), true, 0))
    }

    /// Off: requests pass through untouched.
    public var isEnabled: Bool {
        get { state.withLock { $0.enabled } }
        set { state.withLock { $0.enabled = newValue } }
    }

    /// How many faults were injected so far.
    public var injected: Int { state.withLock { $0.injected } }

    private func roll(_ probability: Double) -> Bool {
        state.withLock { state in
            guard state.enabled, probability > 0 else { return false }
            let hit = Double(state.random.next() >> 11) / Double(1 << 53) < probability
            if hit { state.injected += 1 }
            return hit
        }
    }

    /// A seeded wait, when the delay fault hits.
    private func delay() -> Duration? {
        guard roll(faults.delay) else { return nil }
        let fraction = state.withLock { Double($0.random.next() >> 11) / Double(1 << 53) }
        return faults.maxDelay * fraction
    }

    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        if let wait = delay() { try await Task.sleep(for: wait) }
        if roll(faults.drop) { throw SyncError(.unreachable, "injected: the request was dropped") }
        if roll(faults.duplicate) { _ = try? await base.send(request) }
        let response = try await base.send(request)
        if roll(faults.cutAfterCommit) { throw SyncError(.unreachable, "injected: the answer was lost after the server acted") }
        return response
    }
}

/// SplitMix64: small, seedable, reproducible.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

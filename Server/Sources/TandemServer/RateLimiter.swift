import Foundation

/// A token bucket per API token: `rate` requests per second sustained, `burst` at once.
actor RateLimiter {
    private let rate: Double
    private let burst: Double
    private let clock: @Sendable () -> Double
    private var buckets: [String: (tokens: Double, at: Double)] = [:]

    init(rate: Double, burst: Double, clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) {
        self.rate = rate
        self.burst = max(burst, 1)
        self.clock = clock
    }

    /// `nil` when the request may go on; otherwise the seconds to wait (for `Retry-After`).
    func admit(_ key: String) -> Int? {
        guard rate > 0 else { return nil }
        let now = clock()
        var bucket = buckets[key] ?? (burst, now)
        bucket.tokens = min(burst, bucket.tokens + (now - bucket.at) * rate)
        bucket.at = now
        guard bucket.tokens >= 1 else {
            buckets[key] = bucket
            return max(1, Int(((1 - bucket.tokens) / rate).rounded(.up)))
        }
        bucket.tokens -= 1
        buckets[key] = bucket
        return nil
    }
}

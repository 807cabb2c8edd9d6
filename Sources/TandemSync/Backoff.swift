/// How long to wait after a failed sync: exponential with full jitter, capped, and never
/// shorter than what the server asked for (`Retry-After`).
///
/// ```swift
/// var random = SystemRandomNumberGenerator()
/// let delay = Backoff().delay(afterFailures: 3, retryAfter: nil, using: &random)   // 0…8 s
/// ```
public struct Backoff: Sendable, Hashable {
    /// The first delay's upper bound.
    public var base: Duration = .seconds(1)
    /// No delay is longer.
    public var maximum: Duration = .seconds(300)

    public init(base: Duration = .seconds(1), maximum: Duration = .seconds(300)) {
        self.base = base
        self.maximum = maximum
    }

    /// The delay after `failures` consecutive failures (1 for the first).
    public func delay(afterFailures failures: Int, retryAfter: Duration? = nil, using random: inout some RandomNumberGenerator) -> Duration {
        let exponent = min(max(failures - 1, 0), 30)
        let ceiling = min(base * (1 << exponent), maximum)
        let milliseconds = max(Int64(ceiling / .milliseconds(1)), 1)
        let jittered = Duration.milliseconds(Int64.random(in: 0...milliseconds, using: &random))
        return max(min(jittered, maximum), retryAfter ?? .zero)
    }
}

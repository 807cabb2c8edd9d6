/// The wall clock the journal reads (history timestamps and the physical part of HLC
/// stamps). Inject a fixed or stepping clock in tests.
///
/// ```swift
/// var configuration = ModelConfiguration(isStoredInMemoryOnly: true)
/// configuration.clock = WallClock { Date(timeIntervalSince1970: 1_000) }
/// ```
public struct WallClock: Sendable {
    public let now: @Sendable () -> Date
    /// A clock the wall clock's corrections do not move (see ``MonotonicReading``), used to
    /// carry the sync server's time forward; `nil` for injected clocks, whose own time
    /// carries it instead.
    public let monotonic: (@Sendable () -> MonotonicReading?)?

    public init(_ now: @escaping @Sendable () -> Date, monotonic: (@Sendable () -> MonotonicReading?)? = nil) {
        self.now = now
        self.monotonic = monotonic
    }

    /// The system clock (and the boot clock where there is one).
    public static let system = WallClock({ Date() }, monotonic: { MonotonicReading.boot() })

    /// Milliseconds since 1970 now.
    var milliseconds: Int64 { Int64((now().timeIntervalSince1970 * 1000).rounded(.down)) }
}

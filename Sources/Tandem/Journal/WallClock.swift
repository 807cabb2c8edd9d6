/// The wall clock the journal reads (history timestamps and the physical part of HLC
/// stamps). Inject a fixed or stepping clock in tests.
///
/// ```swift
/// var configuration = ModelConfiguration(isStoredInMemoryOnly: true)
/// configuration.clock = WallClock { Date(timeIntervalSince1970: 1_000) }
/// ```
public struct WallClock: Sendable {
    public let now: @Sendable () -> Date

    public init(_ now: @escaping @Sendable () -> Date) { self.now = now }

    /// The system clock.
    public static let system = WallClock { Date() }
}

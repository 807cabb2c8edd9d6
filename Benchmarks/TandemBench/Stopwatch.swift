import Tandem

/// Times a closure with `ContinuousClock`. The result is returned, not dropped, so that
/// deallocating it is *not* part of the measured time (the same rule for every competitor).
enum Stopwatch {
    static func time<T>(_ body: () throws -> T) rethrows -> (Duration, T) {
        let clock = ContinuousClock()
        let start = clock.now
        let result = try body()
        return (start.duration(to: clock.now), result)
    }
}

extension Duration {
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    var milliseconds: String {
        let ms = seconds * 1000
        return ms < 10 ? String(format: "%.2f ms", ms) : String(format: "%.1f ms", ms)
    }
}

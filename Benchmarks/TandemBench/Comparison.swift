/// One line of the result table: Tandem against one competitor, with its target.
struct Comparison {
    enum Target {
        /// Tandem's time ÷ the competitor's must be at most this.
        case ratioAtMost(Double)
        /// The competitor's time ÷ Tandem's must be at least this (Tandem that much faster).
        case speedupAtLeast(Double)
    }

    var operation: String
    var tandem: Measurement
    var competitor: Measurement
    var target: Target

    var ratio: Double { tandem.median.seconds / competitor.median.seconds }

    var passed: Bool {
        switch target {
        case .ratioAtMost(let limit): ratio <= limit
        case .speedupAtLeast(let limit): 1 / ratio >= limit
        }
    }

    var ratioText: String {
        switch target {
        case .ratioAtMost: String(format: "%.2f×", ratio)
        case .speedupAtLeast: String(format: "%.1f× faster", 1 / ratio)
        }
    }

    var targetText: String {
        switch target {
        case .ratioAtMost(let limit): "≤ \(Self.number(limit))×"
        case .speedupAtLeast(let limit): "≥ \(Self.number(limit))× faster"
        }
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) + (value < 10 ? ".0" : "") : String(value)
    }
}

/// One line of the result table: Tandem against one competitor, with its target.
struct Comparison {
    enum Target {
        /// Tandem's time ÷ the competitor's must be at most this.
        case ratioAtMost(Double)
        /// The competitor's time ÷ Tandem's must be at least this (Tandem that much faster).
        case speedupAtLeast(Double)
        /// Tandem's median must be at most this long (a whole-process figure); the competitor
        /// is the floor it is measured next to.
        case timeAtMost(Duration)
        /// No target: shown for context (e.g. how close Tandem is to the floor).
        case none
    }

    var operation: String
    var tandem: Measurement
    var competitor: Measurement
    var target: Target

    /// Ratio of the medians: what the target is checked against.
    var ratio: Double { tandem.median.seconds / competitor.median.seconds }

    /// Tandem ÷ competitor within each round (both ran back to back), to show how much of
    /// the spread is machine noise.
    var roundRatios: [Double] {
        zip(tandem.samples, competitor.samples).map { $0.seconds / $1.seconds }
    }

    var hasTarget: Bool {
        if case .none = target { false } else { true }
    }

    var passed: Bool {
        switch target {
        case .ratioAtMost(let limit): ratio <= limit
        case .speedupAtLeast(let limit): 1 / ratio >= limit
        case .timeAtMost(let limit): tandem.median <= limit
        case .none: true
        }
    }

    var ratioText: String { format(ratio: ratio) }

    func format(ratio: Double) -> String {
        switch target {
        case .ratioAtMost, .timeAtMost, .none: String(format: "%.2f×", ratio)
        case .speedupAtLeast: String(format: "%.1f× faster", 1 / ratio)
        }
    }

    var targetText: String {
        switch target {
        case .ratioAtMost(let limit): "≤ \(Self.number(limit))×"
        case .speedupAtLeast(let limit): "≥ \(Self.number(limit))× faster"
        case .timeAtMost(let limit): "Tandem ≤ \(limit.milliseconds)"
        case .none: "—"
        }
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) + (value < 10 ? ".0" : "") : String(value)
    }
}

import Tandem

/// The timings of one competitor in one test: a warm-up (discarded) and the measured runs.
struct Measurement {
    var name: String
    var samples: [Duration] = []

    init(_ name: String) { self.name = name }

    /// The same samples, named "`test`: `name`" for the list of all samples.
    func labelled(_ test: String) -> Measurement {
        var copy = self
        copy.name = "\(test): \(name)"
        return copy
    }

    var median: Duration {
        let sorted = samples.sorted()
        guard !sorted.isEmpty else { return .zero }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    var summary: String {
        let sorted = samples.sorted()
        guard let low = sorted.first, let high = sorted.last else { return "\(name): no samples" }
        return "\(name): median \(median.milliseconds) (min \(low.milliseconds), max \(high.milliseconds); in run order: "
            + samples.map(\.milliseconds).joined(separator: ", ") + ")"
    }
}

import Foundation

extension Report {
    /// One comparison as data, for `Scripts/bench-charts.py`.
    struct Row: Encodable {
        var operation: String
        var tandem: String
        var tandemMilliseconds: Double
        var competitor: String
        var competitorMilliseconds: Double
        /// Tandem's median ÷ the competitor's.
        var ratio: Double
        var target: String
        var passed: Bool?
    }

    /// The results as JSON (`{"rows": N, "runs": K, "comparisons": [...]}`), written to
    /// `path` (its folder made when missing): what the charts of docs/benchmarks.md are drawn
    /// from.
    ///
    /// - Throws: when the file cannot be written.
    func write(to path: String) throws {
        struct Document: Encodable {
            var rows: Int
            var runs: Int
            var cores: Int
            var comparisons: [Row]
        }
        let document = Document(
            rows: options.rows, runs: options.runs, cores: ProcessInfo.processInfo.activeProcessorCount,
            comparisons: comparisons.map { comparison in
                Row(
                    operation: comparison.operation, tandem: comparison.tandem.name, tandemMilliseconds: comparison.tandem.median.seconds * 1000,
                    competitor: comparison.competitor.name, competitorMilliseconds: comparison.competitor.median.seconds * 1000,
                    ratio: comparison.ratio, target: comparison.targetText, passed: comparison.hasTarget ? comparison.passed : nil)
            })
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(document).write(to: url)
    }
}

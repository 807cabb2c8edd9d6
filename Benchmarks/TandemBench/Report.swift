import GRDBSQLite
import Tandem

/// Prints the comparisons as a Markdown table (readable in a terminal, pasteable in docs).
struct Report {
    var options: Options
    var comparisons: [Comparison] = []
    var measurements: [Measurement] = []
    /// Lines printed under the table (figures that are not timings, such as query counts).
    var notes: [String] = []

    func print() {
        let header = ["Operation", "Tandem", "Competitor", "Competitor time", "Tandem ÷ competitor", "Target", "Result"]
        var rows: [[String]] = []
        var previous: String?
        for comparison in comparisons {
            let first = comparison.operation != previous
            previous = comparison.operation
            rows.append([
                first ? comparison.operation : "",
                first ? comparison.tandem.median.milliseconds + (comparison.tandem.name == "Tandem" ? "" : " (\(comparison.tandem.name))") : "",
                comparison.competitor.name,
                comparison.competitor.median.milliseconds,
                comparison.ratioText,
                comparison.targetText,
                !comparison.hasTarget ? "info" : comparison.passed ? "PASS" : "**FAIL**",
            ])
        }
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            "| " + zip(cells, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: " | ") + " |"
        }
        Swift.print(line(header))
        Swift.print("|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|")
        for row in rows { Swift.print(line(row)) }
        Swift.print()
        let targets = comparisons.filter(\.hasTarget)
        let failed = targets.filter { !$0.passed }
        Swift.print(failed.isEmpty ? "All \(targets.count) targets met." : "FAIL: \(failed.count) of \(targets.count) targets missed.")
        for note in notes { Swift.print(note) }
        Swift.print(
            "Note: medians of \(options.runs) run\(options.runs == 1 ? "" : "s") after one warm-up, \(options.rows) rows, "
                + "\(ProcessInfo.processInfo.activeProcessorCount) cores, SQLite \(String(cString: sqlite3_libversion())); "
                + "ratios from one run on a shared machine, not a controlled lab — expect noise of ±10–20%.")
        Swift.print()
        Swift.print("All samples:")
        for measurement in measurements { Swift.print("  " + measurement.summary) }
        Swift.print("Ratio per round (Tandem and competitor ran back to back; a spread here is machine noise):")
        for comparison in comparisons {
            let ratios = comparison.roundRatios.map { comparison.format(ratio: $0) }.joined(separator: ", ")
            Swift.print("  \(comparison.operation) vs \(comparison.competitor.name): \(ratios)")
        }
    }
}

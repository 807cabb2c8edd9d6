// TandemBench: Tandem vs GRDB vs the raw SQLite C API, side by side in one process.
// Usage: TandemBench [--rows N] [--runs K] [--only insert|fetch|groupby|graph|journal|schema].
// The results are also written as JSON to $TANDEM_BENCH_DATA (default .build/bench/tandem.json),
// which Scripts/bench-charts.py draws.
// Always exits 0 once the tests ran: a missed target is reported as FAIL in the table
// (benchmarks are reports, not tests). Exits 1 only when a test could not run.
import Tandem

do {
    guard let options = try Options.parse(Array(CommandLine.arguments.dropFirst())) else { exit(0) }
    print("TandemBench: \(options.rows) rows, \(options.runs) runs (+1 warm-up) per test…\n")
    let report = try Benchmark(options: options).run()
    report.print()
    let data = ProcessInfo.processInfo.environment["TANDEM_BENCH_DATA"] ?? ".build/bench/tandem.json"
    try report.write(to: data)
    print("Results as data: \(data)")
} catch {
    FileHandle.standardError.write(Data("TandemBench: \(error)\n".utf8))
    exit(1)
}

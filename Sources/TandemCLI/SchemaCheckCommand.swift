import ArgumentParser
import TandemSchema

/// Options shared by `check` and `diff`.
struct ComparisonOptions: ParsableArguments {
    @Option(help: "A released schema JSON file, or a directory of them (the candidate is checked against every one).")
    var baseline: String

    @Option(parsing: .upToNextOption, help: "The new schema: a JSON file, or Swift sources (files or directories) to extract it from.")
    var candidate: [String]

    @Option(help: "Output format: text, json or github (GitHub Actions annotations).")
    var format: OutputFormat = .text

    @Option(help: "Storage of types the sources do not define (see `tandem schema extract --help`).")
    var types: String?

    @Option(help: "With Swift sources: only the models nested in this type (a versioned schema's `enum V2`), plus top-level ones.")
    var scope: String?

    func validate() throws {
        if candidate.isEmpty { throw ValidationError("--candidate needs a schema JSON file or Swift sources") }
    }

    func run(includeSafe: Bool, config: String?) throws -> (CompatibilityReport, [CompatibilityCheck.Baseline]) {
        // Baselines and candidate are read in parallel: on a large schema, reading is most of the work.
        let baseline = self.baseline
        let (baselines, loaded) = try SchemaInputs.concurrently(
            { try SchemaInputs.baselines(at: baseline) },
            { try SchemaInputs.candidate(at: candidate, typesFile: types, scope: scope) })
        let ignores = try SchemaInputs.ignores(config)
        let check = CompatibilityCheck(allowances: ignores.allowances + loaded.allowances, locations: loaded.locations)
        var report = check.run(baselines: baselines, candidate: loaded.schema)
        if !includeSafe { report.findings.removeAll { $0.verdict == .safe } }
        return (report, baselines)
    }
}

/// `tandem schema check --baseline … --candidate …`.
struct SchemaCheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Check that a candidate schema keeps sync working with every released one.",
        discussion: "Exit code 0: compatible (warnings allowed); 1: breaking findings (or warnings with --strict); 2: bad input or usage.")

    @OptionGroup var options: ComparisonOptions

    @Flag(help: "Fail on warnings too.")
    var strict = false

    @Option(help: "The ignore file (default: .tandem-schema.json in the current directory, if present).")
    var config: String?

    func run() throws {
        let (report, baselines) = try options.run(includeSafe: false, config: config)
        print(FindingFormatter(format: options.format).render(report, baselines: baselines.map(\.name), title: "check", strict: strict), terminator: "")
        if report.fails(strict: strict) { throw CheckFailed() }
    }
}

/// `tandem schema diff --baseline … --candidate …`.
struct SchemaDiffCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "List every change between two schemas, safe ones included (for a changelog). Exit code 0 unless the input is bad.")

    @OptionGroup var options: ComparisonOptions

    func run() throws {
        let (report, baselines) = try options.run(includeSafe: true, config: nil)
        print(FindingFormatter(format: options.format).render(report, baselines: baselines.map(\.name), title: "diff", strict: false), terminator: "")
    }
}

/// `tandem schema rules [--format json]`.
struct SchemaRulesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rules",
        abstract: "Print every compatibility rule with its ID, verdict and rationale.")

    @Option(help: "Output format: text or json.")
    var format: OutputFormat = .text

    func run() throws {
        print(FindingFormatter(format: format).render(rules: CompatibilityRule.all), terminator: "")
    }
}

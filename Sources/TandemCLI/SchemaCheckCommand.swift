import ArgumentParser
import Foundation
import TandemSchema

/// The candidate schema of `check`, `diff` and `publish`.
struct CandidateOptions: ParsableArguments {
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

    func load() throws -> SchemaInputs.Candidate {
        try SchemaInputs.candidate(at: candidate, typesFile: types, scope: scope)
    }
}

/// Options shared by `check` and `diff`: the released schemas (files, or a live server's
/// registered versions) and the candidate.
struct ComparisonOptions: ParsableArguments {
    @Option(help: "A released schema JSON file, or a directory of them (the candidate is checked against every one); repeatable. Or use --server.")
    var baseline: [String] = []

    @OptionGroup var remote: SchemaServerOptions

    @OptionGroup var candidateOptions: CandidateOptions

    var format: OutputFormat { candidateOptions.format }

    func validate() throws {
        if baseline.isEmpty == (remote.server == nil) {
            throw ValidationError("pass --baseline FILE|DIR, or --server URL --dataset NAME (the versions a server registered), not both")
        }
    }

    func run(includeSafe: Bool, config: String?) throws -> (CompatibilityReport, [CompatibilityCheck.Baseline]) {
        // Baselines and candidate are read in parallel: on a large schema, reading is most of the work.
        let baseline = self.baseline
        let remote = self.remote
        var (baselines, loaded) = try SchemaInputs.concurrently(
            { baseline.isEmpty ? try remote.baselines() : try baseline.flatMap { try SchemaInputs.baselines(at: $0) } },
            { try candidateOptions.load() })
        // A candidate that is a registered version (a fix on an older release) is that
        // version: checked against those up to it, as `publish` registers nothing for it.
        if remote.isSet, let index = baselines.lastIndex(where: { loaded.schema.isVersion(of: $0.schema) }) {
            FileHandle.standardError.write(Data("tandem: the candidate is the server's \(baselines[index].name); checked against the versions up to it\n".utf8))
            baselines = Array(baselines[...index])
        }
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
        let (report, baselines) = try SchemaServerOptions.exitingWhenUnreachable { try options.run(includeSafe: false, config: config) }
        if baselines.isEmpty, let dataset = options.remote.dataset {
            FileHandle.standardError.write(Data("tandem: '\(dataset)' has no schema version on the server yet: nothing to check against\n".utf8))
        }
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
        let (report, baselines) = try SchemaServerOptions.exitingWhenUnreachable { try options.run(includeSafe: true, config: nil) }
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

/// `tandem schema publish --server … --dataset … --candidate …`: registers a release's schema
/// from CI, so the server knows it (and its enum cases) before any client ships it.
struct SchemaPublishCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract: "Register a schema version on a server before a release (the server checks it against every registered version).",
        discussion: """
            The server refuses a schema that would break sync with a registered version, with its findings (rule IDs): nothing is registered then. \
            A schema that is a registered version already (the same, or the same but for enum cases a running app cannot list) registers nothing. \
            Exit codes: 0 registered (or already registered), 1 refused as incompatible, 2 bad input, 3 the server is unreachable or busy (retry later).
            """)

    @OptionGroup var remote: SchemaServerOptions

    @OptionGroup var candidateOptions: CandidateOptions

    func validate() throws {
        if remote.server == nil { throw ValidationError("publish needs --server URL --dataset NAME") }
    }

    func run() throws {
        let candidate = try candidateOptions.load()
        let publication = try SchemaServerOptions.exitingWhenUnreachable { try remote.publish(candidate.schema) }
        let dataset = remote.dataset ?? ""
        switch publication {
        case .registered(let version, let created):
            switch candidateOptions.format {
            case .json: try printJSON(PublishResult(dataset: dataset, version: version, created: created))
            case .text, .github:
                print(created ? "published '\(dataset)' schema version \(version)" : "'\(dataset)' has this schema already: version \(version) (nothing registered)")
            }
        case .refused(let message, var findings):
            for index in findings.indices { findings[index].location = candidate.locations[findings[index].path] }
            let report = CompatibilityReport(findings: findings)
            if candidateOptions.format == .text { FileHandle.standardError.write(Data("tandem: the server refused the schema: \(message)\n".utf8)) }
            print(FindingFormatter(format: candidateOptions.format).render(report, baselines: ["server"], title: "publish", strict: false), terminator: "")
            throw CheckFailed()
        }
    }

    /// `--format json` of a registration.
    struct PublishResult: Encodable {
        var dataset: String
        var version: Int
        var created: Bool
    }
}

import ArgumentParser

/// `--format` of the schema commands.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    /// Grouped by verdict, colored on a terminal.
    case text
    /// One JSON document with one object per finding.
    case json
    /// GitHub Actions workflow commands (`::error file=…,line=…::…`).
    case github
}

/// Command line: `TandemBench [--rows N] [--runs K] [--only TEST]`.
struct Options {
    var rows = 100_000
    var runs = 3
    /// Runs only these tests (for profiling one of them); all when empty.
    var only: Set<String> = []
    static let tests = ["insert", "fetch", "articles", "groupby", "graph", "journal", "schema"]

    static let usage = """
        usage: TandemBench [--rows N] [--runs K] [--only T]
          --rows N   rows per test (default 100000)
          --runs K   measured runs per test after one warm-up; the median is reported (default 3)
          --only T   run only test T (insert, fetch, articles, groupby, graph, journal or schema; repeatable), e.g. under a profiler
        """

    /// Parses `arguments` (without the program name); `nil` after printing help.
    static func parse(_ arguments: [String]) throws -> Options? {
        var options = Options()
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--rows", "--runs":
                guard let text = rest.popFirst(), let value = Int(text.replacingOccurrences(of: "_", with: "")), value > 0 else {
                    throw BenchError("\(argument) needs a positive integer\n\(usage)")
                }
                if argument == "--rows" { options.rows = value } else { options.runs = value }
            case "--only":
                guard let test = rest.popFirst(), tests.contains(test) else {
                    throw BenchError("--only needs one of \(tests.joined(separator: ", "))\n\(usage)")
                }
                options.only.insert(test)
            case "-h", "--help":
                print(usage)
                return nil
            default:
                throw BenchError("unknown argument '\(argument)'\n\(usage)")
            }
        }
        return options
    }

    func includes(_ test: String) -> Bool { only.isEmpty || only.contains(test) }
}

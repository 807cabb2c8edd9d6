/// Command line: `TandemBench [--rows N] [--runs K]`.
struct Options {
    var rows = 100_000
    var runs = 3

    static let usage = """
        usage: TandemBench [--rows N] [--runs K]
          --rows N   rows per test (default 100000)
          --runs K   measured runs per test after one warm-up; the median is reported (default 3)
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
            case "-h", "--help":
                print(usage)
                return nil
            default:
                throw BenchError("unknown argument '\(argument)'\n\(usage)")
            }
        }
        return options
    }
}

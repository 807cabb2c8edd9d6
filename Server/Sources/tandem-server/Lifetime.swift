import ArgumentParser

/// A lifetime on the command line: a whole number and a unit, `s`, `m`, `h`, `d` or `w`
/// (`90m`, `12h`, `30d`), in lower case.
///
/// ```
/// tandem-server tokens create ann --expires 30d
/// ```
struct Lifetime: ExpressibleByArgument {
    var milliseconds: Int64

    init?(argument: String) {
        // Units as written: `M` is not a month, nor a minute by accident.
        let text = argument.trimmingCharacters(in: .whitespaces)
        let units: [Character: Int64] = ["s": 1_000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000]
        guard let last = text.last, let unit = units[last], let number = Int64(text.dropLast()), number >= 1 else { return nil }
        let (product, overflow) = number.multipliedReportingOverflow(by: unit)
        guard !overflow else { return nil }
        milliseconds = product
    }

    static var defaultCompletionKind: CompletionKind { .default }
}

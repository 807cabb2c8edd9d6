import ArgumentParser
import Foundation

/// A count of at least 1 on the command line: a whole number, with K, M, G or T for powers of
/// 1024 (`500M`, `20G`).
///
/// ```
/// tandem-server serve --max-bytes-per-user 20G
/// ```
struct ByteCount: ExpressibleByArgument {
    var value: Int64

    init(_ value: Int64) {
        self.value = value
    }

    init?(argument: String) {
        let text = argument.trimmingCharacters(in: .whitespaces).uppercased()
        let units: [Character: Int64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40]
        var digits = Substring(text)
        var unit: Int64 = 1
        if let last = digits.last, let scale = units[last] {
            unit = scale
            digits = digits.dropLast()
        }
        guard let number = Int64(digits), number >= 1 else { return nil }
        let (product, overflow) = number.multipliedReportingOverflow(by: unit)
        guard !overflow else { return nil }
        value = product
    }

    var defaultValueDescription: String { String(value) }
}

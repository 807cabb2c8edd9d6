/// A failed benchmark precondition (wrong row count, mismatched layout…).
struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

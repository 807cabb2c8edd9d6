/// A position in the change journal: every committed history transaction has a larger
/// token than the ones before it, across restarts and processes, and tokens are never reused
/// (even after ``ModelContext/deleteHistory(before:)``).
///
/// Persist the token of the last transaction you processed and pass it to
/// ``HistoryDescriptor/init(after:)`` to continue from there.
///
/// ```swift
/// let saved = try JSONEncoder().encode(transaction.token)      // a plain number
/// let token = try JSONDecoder().decode(HistoryToken.self, from: saved)
/// let next = try context.fetchHistory(HistoryDescriptor(after: token))
/// ```
public struct HistoryToken: RawRepresentable, Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    public var rawValue: Int64

    public init(rawValue: Int64) { self.rawValue = rawValue }

    /// Before every transaction: `HistoryDescriptor(after: .start)` reads all history.
    public static let start = HistoryToken(rawValue: 0)

    public static func < (lhs: HistoryToken, rhs: HistoryToken) -> Bool { lhs.rawValue < rhs.rawValue }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(Int64.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { String(rawValue) }
}

/// What an API token may reach: some datasets or all its user reaches, read-only or not,
/// until a time or for good. The user's role in each dataset still applies: a scope only
/// narrows it.
///
/// ```swift
/// let scope = TokenScope(datasets: [todos.id], readOnly: true, expiresAt: now + 30 * 86_400_000)
/// scope.allows(dataset: todos.id)      // true
/// scope.cap(.admin)                    // .reader
/// ```
public struct TokenScope: Sendable, Hashable, Codable {
    /// The datasets the token reaches (ids); `nil`: every dataset its user reaches, and it
    /// may create datasets.
    public var datasets: [Int64]?
    /// Pulls and reads only: pushes, schema registrations, member changes and dataset
    /// creation or deletion are refused (403 `read_only_token`).
    public var readOnly: Bool
    /// When the token stops working (milliseconds since 1970); `nil`: never.
    public var expiresAt: Int64?

    public init(datasets: [Int64]? = nil, readOnly: Bool = false, expiresAt: Int64? = nil) {
        self.datasets = datasets
        self.readOnly = readOnly
        self.expiresAt = expiresAt
    }

    /// A token of its user's whole reach, for good.
    public static let unlimited = TokenScope()

    /// Whether the token reaches the dataset with this id.
    public func allows(dataset: Int64) -> Bool { datasets?.contains(dataset) ?? true }

    /// Whether the token has expired at `now` (milliseconds since 1970).
    public func hasExpired(at now: Int64) -> Bool { expiresAt.map { now >= $0 } ?? false }

    /// The dataset ids as stored in a text column (`"3,7"`), `nil` for every dataset.
    public var datasetsText: String? { datasets.map { $0.map(String.init).joined(separator: ",") } }

    /// Reads ``datasetsText`` back (a text that is not such a list reaches no dataset).
    public static func datasets(fromText text: String?) -> [Int64]? {
        guard let text else { return nil }
        return text.split(separator: ",").compactMap { Int64($0) }
    }
}

/// A user as `tandem-server users list` shows them.
///
/// ```swift
/// for summary in try await storage.users(now: now) { print(summary.user.name, summary.datasets) }
/// ```
public struct UserSummary: Sendable, Hashable {
    public var user: ServerUser
    public var createdAt: Int64
    /// Datasets the user owns.
    public var datasets: Int
    /// Datasets shared with the user.
    public var memberships: Int
    /// The user's live tokens (neither revoked nor expired).
    public var tokens: Int

    public init(user: ServerUser, createdAt: Int64, datasets: Int, memberships: Int, tokens: Int) {
        self.user = user
        self.createdAt = createdAt
        self.datasets = datasets
        self.memberships = memberships
        self.tokens = tokens
    }
}

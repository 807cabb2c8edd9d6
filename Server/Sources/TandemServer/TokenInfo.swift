/// An API token as `tandem-server tokens list` shows it (never its secret).
///
/// ```swift
/// for token in try await storage.tokens(user: nil) where token.revokedAt == nil { print(token.id, token.user) }
/// ```
public struct TokenInfo: Sendable, Hashable {
    public var id: String
    /// Its user's name.
    public var user: String
    public var createdAt: Int64
    public var revokedAt: Int64?
    public var scope: TokenScope
    /// The datasets of its scope as `OWNER/NAME` (a deleted one is left out).
    public var datasets: [String]

    public init(id: String, user: String, createdAt: Int64, revokedAt: Int64?, scope: TokenScope, datasets: [String]) {
        self.id = id
        self.user = user
        self.createdAt = createdAt
        self.revokedAt = revokedAt
        self.scope = scope
        self.datasets = datasets
    }
}

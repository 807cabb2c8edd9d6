/// A live API token as the server finds it: whose it is, the hash of its secret and its
/// scope.
///
/// ```swift
/// if let stored = try await storage.token(id: token.id), token.matches(secretHash: stored.secretHash) { … }
/// ```
public struct StoredToken: Sendable {
    public var user: ServerUser
    public var secretHash: String
    public var scope: TokenScope

    public init(user: ServerUser, secretHash: String, scope: TokenScope = .unlimited) {
        self.user = user
        self.secretHash = secretHash
        self.scope = scope
    }
}

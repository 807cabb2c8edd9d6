/// Creates API tokens: the secret is returned once, only its hash is stored.
///
/// ```swift
/// let text = try await TokenIssuer.issue(for: user, in: storage)   // "tdm_<id>_<secret>"
/// let reader = try await TokenIssuer.issue(for: user, in: storage, scope: TokenScope(datasets: [id], readOnly: true))
/// ```
public enum TokenIssuer {
    /// - Throws: the storage's error.
    public static func issue(for user: ServerUser, in storage: any ServerStorage, scope: TokenScope = .unlimited, now: Int64 = 0) async throws -> String {
        let token = APIToken.generate()
        try await storage.addToken(id: token.id, secretHash: token.secretHash, user: user.id, scope: scope, now: now)
        return token.text
    }
}

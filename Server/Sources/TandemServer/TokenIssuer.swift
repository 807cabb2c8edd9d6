/// Creates API tokens: the secret is returned once, only its hash is stored.
///
/// ```swift
/// let text = try await TokenIssuer.issue(for: user, in: storage)   // "tdm_<id>_<secret>"
/// ```
public enum TokenIssuer {
    public static func issue(for user: ServerUser, in storage: any ServerStorage, now: Int64 = 0) async throws -> String {
        let token = APIToken.generate()
        try await storage.addToken(id: token.id, secretHash: token.secretHash, user: user.id, now: now)
        return token.text
    }
}

/// How `tandem-server serve --jwks … --jwt-issuer … --jwt-audience …` accepts the app's own
/// sign-in: which issuer and audience a JWT must name, which claim names the user, which
/// algorithms are accepted, and how long the JWKS is cached.
///
/// ```swift
/// let settings = JWTSettings(issuer: "https://login.example.com/", audience: "todo-app")
/// ```
public struct JWTSettings: Sendable, Hashable {
    /// The asymmetric algorithms a JWT may be signed with. `none` and HMAC (`HS256`…) are never
    /// accepted: an HMAC "signed" with a public key proves nothing.
    public static let acceptedAlgorithms: Set<String> = ["RS256", "ES256", "EdDSA"]

    /// `iss` must be exactly this.
    public var issuer: String
    /// `aud` (a string or a list) must contain this.
    public var audience: String
    /// The claim whose value is the user's name (made on first use), `sub` by default. Its
    /// value must be a valid user name (letters, digits, `-`, `_`, `.`).
    public var userClaim: String
    /// How long the JWKS is kept before it is read again.
    public var refreshInterval: Duration
    /// How soon after a read an unknown key id may read the JWKS again (key rotation
    /// without letting a stream of bad tokens hammer the identity provider).
    public var refetchInterval: Duration
    /// How far ahead of the server's clock `nbf` may be (milliseconds).
    public var leewayMilliseconds: Int64

    public init(
        issuer: String, audience: String, userClaim: String = "sub", refreshInterval: Duration = .seconds(600),
        refetchInterval: Duration = .seconds(30), leewayMilliseconds: Int64 = 60_000
    ) {
        self.issuer = issuer
        self.audience = audience
        self.userClaim = userClaim
        self.refreshInterval = refreshInterval
        self.refetchInterval = refetchInterval
        self.leewayMilliseconds = leewayMilliseconds
    }
}

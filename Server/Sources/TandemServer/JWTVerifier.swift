public import Foundation
public import Logging
import JWTKit
import TandemWire

/// Verifies the app's own sign-in: a JWT signed by its identity provider, against the keys of
/// its JWKS (``JWKSSource``, cached for ``JWTSettings/refreshInterval`` and read again when a
/// token names a key id it does not know, at most every ``JWTSettings/refetchInterval``).
/// Signatures are jwt-kit's (swift-crypto); this type decides what is accepted.
///
/// Accepted: RS256, ES256 (P-256) and EdDSA (Ed25519), with a `kid` the JWKS lists for that
/// algorithm; `exp` required and in the future, `nbf` (if any) not ahead of the server's
/// clock by more than the leeway, `iss` the configured issuer, `aud` containing the
/// configured audience, and the user claim a valid user name. Everything else is 401 with a
/// message that says which rule failed.
///
/// ```swift
/// let verifier = JWTVerifier(settings: JWTSettings(issuer: "https://id.example.com/", audience: "todos"),
///                            source: try JWKSSources.live("jwks.json"), logger: logger)
/// try await verifier.load()                                  // at startup: fails on a bad JWKS
/// let identity = try await verifier.verify(jwt, now: now)    // identity.user: "ann"
/// ```
public actor JWTVerifier {
    /// Who a valid JWT names, and until when it is valid (milliseconds since 1970).
    public struct Identity: Sendable, Hashable {
        /// The user name its user claim gives (for a subject not bound to a user yet).
        public var user: String
        /// Its `sub`: the account at the identity provider, which a user is bound to.
        public var subject: String
        public var expiresAt: Int64
    }

    public nonisolated let settings: JWTSettings
    let source: any JWKSSource
    let logger: Logger
    /// Key id → the algorithm its key verifies.
    private var algorithms: [String: String] = [:]
    private var keys = JWTKeyCollection()
    private var loadedAt: ContinuousClock.Instant?
    private var loading: Task<Int, any Error>?

    public init(settings: JWTSettings, source: any JWKSSource, logger: Logger) {
        self.settings = settings
        self.source = source
        self.logger = logger
    }

    /// Reads the JWKS now; returns how many keys it accepted.
    ///
    /// - Throws: when the JWKS cannot be read or holds no usable key (each skipped key is
    ///   logged with the reason).
    @discardableResult
    public func load() async throws -> Int {
        if let loading { return try await loading.value }
        let task = Task { try await self.read() }
        loading = task
        defer { loading = nil }
        return try await task.value
    }

    private func read() async throws -> Int {
        // Counted as a read even when it fails: a broken identity provider is asked again
        // after the intervals, not on every request.
        loadedAt = .now
        let data = try await source.fetch()
        guard let document = try? JSONSerialization.jsonObject(with: data) as? [String: Any], let entries = document["keys"] as? [Any] else {
            throw StorageError.unavailable("the JWKS at \(source.location) is not a JSON object with a \"keys\" array")
        }
        var algorithms: [String: String] = [:]
        let keys = JWTKeyCollection()
        for entry in entries {
            guard let object = entry as? [String: Any], let json = try? JSONSerialization.data(withJSONObject: object),
                var jwk = try? JSONDecoder().decode(JWK.self, from: json)
            else {
                logger.warning("a JWKS key of a type this server does not accept was skipped", metadata: ["jwks": "\(source.location)"])
                continue
            }
            guard let kid = jwk.keyIdentifier?.string, !kid.isEmpty else {
                logger.warning("a JWKS key without kid was skipped", metadata: ["jwks": "\(source.location)"])
                continue
            }
            // A key published for encryption (or for operations that do not include
            // verifying) is not a signing key.
            if let use = object["use"] as? String, use != "sig" {
                logger.warning("a JWKS key not for signatures (use) was skipped", metadata: ["kid": "\(kid)", "use": "\(use)"])
                continue
            }
            if let operations = object["key_ops"] as? [String], !operations.contains("verify") {
                logger.warning("a JWKS key not for verifying (key_ops) was skipped", metadata: ["kid": "\(kid)"])
                continue
            }
            let algorithm: String
            switch (jwk.keyType, jwk.curve) {
            case (.rsa, _): algorithm = "RS256"
            case (.ecdsa, .some(let curve)) where curve == .ecdsa(.p256): algorithm = "ES256"
            case (.octetKeyPair, .some(let curve)) where curve == .eddsa(.ed25519): algorithm = "EdDSA"
            default:
                logger.warning("a JWKS key of a curve this server does not accept was skipped", metadata: ["kid": "\(kid)"])
                continue
            }
            if let stated = jwk.algorithm?.rawValue, stated != algorithm {
                logger.warning("a JWKS key for an algorithm this server does not accept was skipped", metadata: ["kid": "\(kid)", "alg": "\(stated)"])
                continue
            }
            guard algorithms[kid] == nil else {
                logger.warning("a JWKS key id appears twice; the first is kept", metadata: ["kid": "\(kid)"])
                continue
            }
            // The signer is made for this algorithm only, whatever a token's header says.
            jwk.algorithm = JWK.Algorithm(rawValue: algorithm)
            do {
                // No default key: a token is only ever checked with the key its kid names.
                try await keys.add(jwk: jwk, isDefault: false)
                algorithms[kid] = algorithm
            } catch {
                logger.warning("a JWKS key that is not a valid public key was skipped", metadata: ["kid": "\(kid)", "error": "\(error)"])
            }
        }
        guard !algorithms.isEmpty else {
            throw StorageError.unavailable("the JWKS at \(source.location) has no usable key (RS256, ES256 on P-256 or EdDSA on Ed25519, each with a kid)")
        }
        self.algorithms = algorithms
        self.keys = keys
        return algorithms.count
    }

    /// Reads the JWKS again when it is older than `interval` (or never read); a failure
    /// keeps the keys held.
    private func refresh(olderThan interval: Duration) async throws {
        // A read in flight (a rotation another request noticed): its keys, not a refusal.
        if let loading { _ = try? await loading.value }
        if let loadedAt, ContinuousClock.now - loadedAt < interval { return }
        do {
            try await load()
        } catch {
            guard !algorithms.isEmpty else {
                var refused = APIError(.serviceUnavailable, "unavailable", "the identity provider's keys cannot be read; retry shortly")
                refused.headers[.retryAfter] = "5"
                logger.error("the JWKS cannot be read", metadata: ["jwks": "\(source.location)", "error": "\(error)"])
                throw refused
            }
            logger.warning("the JWKS cannot be read again; the keys read before stay in use", metadata: ["jwks": "\(source.location)", "error": "\(error)"])
        }
    }

    /// Seconds since 1970 as milliseconds, `nil` for what is not a time (NaN, ±∞, or past
    /// year 9999: a JWT's numbers are the issuer's, and no value may trap).
    static func milliseconds(_ seconds: Double) -> Int64? {
        guard seconds.isFinite, seconds >= 0, seconds < 253_402_300_800 else { return nil }
        return Int64((seconds * 1000).rounded(.down))
    }

    /// The identity a JWT names, if it is valid at `now` (milliseconds since 1970).
    ///
    /// - Throws: ``APIError``: 401 (`unauthorized`, `token_expired`, `token_not_yet_valid`)
    ///   naming the rule that failed; 503 when no JWKS could be read yet.
    public func verify(_ token: String, now: Int64) async throws -> Identity {
        func refuse(_ message: String, code: String = "unauthorized") -> APIError { APIError(.unauthorized, code, message) }
        let claims: JWTClaims
        let header: JWTHeader
        do {
            (header, claims, _) = try DefaultJWTParser().parse(Array(token.utf8), as: JWTClaims.self)
        } catch {
            throw refuse("malformed JWT: expected header.payload.signature in base64url, with JSON header and claims")
        }
        let accepted = JWTSettings.acceptedAlgorithms.sorted().joined(separator: ", ")
        guard let algorithm = header.alg, JWTSettings.acceptedAlgorithms.contains(algorithm) else {
            throw refuse("the JWT's algorithm \(header.alg ?? "(none)") is not accepted; this server accepts \(accepted)")
        }
        // RFC 7515 §4.1.11: an extension the server does not understand is refused, and it
        // understands none.
        guard header.fields["crit"] == nil else { throw refuse("the JWT's header lists critical extensions (crit); this server accepts none") }
        guard let kid = header.kid, !kid.isEmpty else { throw refuse("the JWT names no key (kid); sign it with a key of the identity provider's JWKS") }
        try await refresh(olderThan: settings.refreshInterval)
        if algorithms[kid] == nil {
            // A key rotated in since the last read.
            try await refresh(olderThan: settings.refetchInterval)
        }
        guard let keyAlgorithm = algorithms[kid] else { throw refuse("the JWT's key '\(kid)' is not in the identity provider's JWKS") }
        guard keyAlgorithm == algorithm else { throw refuse("the key '\(kid)' verifies \(keyAlgorithm), and the JWT says \(algorithm)") }
        do {
            _ = try await keys.verify(token, as: JWTClaims.self)
        } catch {
            throw refuse("the JWT's signature does not verify with the key '\(kid)'")
        }
        guard let expires = claims.expires.flatMap(Self.milliseconds) else {
            throw refuse("the JWT has no exp (seconds since 1970): this server accepts only JWTs that expire")
        }
        let expiresAt = expires
        guard now < expiresAt else { throw refuse("the JWT has expired: sign in again", code: "token_expired") }
        if let notBefore = claims.notBefore {
            guard let notBefore = Self.milliseconds(notBefore) else { throw refuse("the JWT's nbf is not a time (seconds since 1970)") }
            guard notBefore <= now + settings.leewayMilliseconds else {
                throw refuse("the JWT is not valid yet (nbf is ahead of the server's clock)", code: "token_not_yet_valid")
            }
        }
        guard claims.issuer == settings.issuer else { throw refuse("the JWT's issuer \(claims.issuer ?? "(none)") is not the one this server accepts") }
        guard claims.audience.contains(settings.audience) else { throw refuse("the JWT's audience does not include the one this server accepts") }
        guard let subject = claims.texts["sub"], !subject.isEmpty else { throw refuse("the JWT has no sub: the identity provider names its account") }
        guard let user = claims.texts[settings.userClaim] else { throw refuse("the JWT has no '\(settings.userClaim)' claim to name its user") }
        guard DatasetReference.isName(user) else {
            throw refuse(
                "the JWT's '\(settings.userClaim)' claim is not a user name (1–128 letters, digits, '-', '_' or '.'); the operator picks another claim with --jwt-user-claim"
            )
        }
        return Identity(user: user, subject: subject, expiresAt: expiresAt)
    }
}

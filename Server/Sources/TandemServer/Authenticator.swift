import Foundation
import Hummingbird

/// Resolves `Authorization: Bearer …` to a user and what the credential may reach, or answers
/// 401: missing, malformed, unknown, revoked and expired credentials alike (the message says
/// which, never whose). A credential is an API token (`tdm_<id>_<secret>`) or, when the server
/// accepts the app's sign-in (``JWTVerifier``), a JWT of its identity provider: its user is
/// made on first use and it expires with the JWT.
struct Authenticator: RouterMiddleware {
    let storage: any ServerStorage
    let limiter: RateLimiter
    /// Milliseconds since 1970 (the dependencies' clock): tokens expire by it.
    let now: @Sendable () -> Int64
    let jwt: JWTVerifier?

    func handle(
        _ request: Request, context: TandemRequestContext,
        next: (Request, TandemRequestContext) async throws -> Response
    ) async throws -> Response {
        guard let header = request.headers[.authorization] else {
            throw APIError.unauthorized("missing bearer token: send Authorization: Bearer <token> (tandem-server tokens create NAME)")
        }
        var context = context
        let credential = try await identify(bearer: Self.bearer(header))
        context.user = credential.user
        context.tokenID = credential.tokenID
        context.scope = credential.scope
        if let wait = await limiter.admit(credential.limitKey) {
            var error = APIError(.tooManyRequests, "rate_limited", "too many requests for this token; retry after \(wait) s")
            error.headers[.retryAfter] = String(wait)
            throw error
        }
        context.logger[metadataKey: "user"] = .string(context.user?.name ?? "")
        return try await next(request, context)
    }

    /// Who a bearer credential is and what it may reach, and the key its requests are
    /// rate-limited by.
    struct Credential {
        var user: ServerUser
        var tokenID: String?
        var scope: TokenScope
        var limitKey: String
    }

    /// The credential of an `Authorization` header's value (`Bearer …`; the scheme's name is
    /// case-insensitive, RFC 9110 §11.1): "" when it is not a bearer credential.
    static func bearer(_ header: String) -> String {
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        return parts.count == 2 && parts[0].lowercased() == "bearer" ? parts[1].trimmingCharacters(in: .whitespaces) : ""
    }

    /// Resolves a bearer credential (an API token or a JWT of the app's sign-in): the
    /// Authorization header's, or one pasted into the dashboard's sign-in form.
    ///
    /// ```swift
    /// let credential = try await authenticator.identify(bearer: "tdm_…")
    /// ```
    ///
    /// - Throws: ``APIError`` 401 for a missing, malformed, unknown, revoked or expired one.
    func identify(bearer text: String) async throws -> Credential {
        if let token = APIToken(text: text) {
            guard let stored = try await storage.token(id: token.id), token.matches(secretHash: stored.secretHash) else {
                throw APIError.unauthorized("unknown or revoked token")
            }
            if stored.scope.hasExpired(at: now()) { throw APIError.tokenExpired }
            return Credential(user: stored.user, tokenID: token.id, scope: stored.scope, limitKey: token.id)
        } else if let jwt, text.split(separator: ".", omittingEmptySubsequences: false).count == 3 {
            let identity = try await jwt.verify(text, now: now())
            let user = try await user(of: identity)
            return Credential(user: user, tokenID: nil, scope: TokenScope(expiresAt: identity.expiresAt), limitKey: "jwt:\(user.id)")
        }
        throw APIError.unauthorized(
            jwt == nil
                ? "malformed bearer token: expected Authorization: Bearer tdm_<id>_<secret>"
                : "malformed bearer token: expected Authorization: Bearer tdm_<id>_<secret>, or a JWT of the app's sign-in")
    }

    /// The user a JWT's subject is bound to; on its first sign-in, a new user of the name its
    /// user claim gives, bound to it. A name another user holds (made by the operator, or
    /// bound to another subject) is never taken over: a name claim the account's owner can
    /// edit must not reach someone else's data.
    private func user(of identity: JWTVerifier.Identity) async throws -> ServerUser {
        if let user = try await storage.user(subject: identity.subject) { return user }
        let taken = APIError.unauthorized(
            "the user name '\(identity.user)' belongs to another account on this server; the operator binds a pre-made user to a sign-in with tandem-server users add NAME --jwt-subject SUB"
        )
        if try await storage.user(named: identity.user) != nil { throw taken }
        do {
            return try await storage.addUser(name: identity.user, now: now(), subject: identity.subject)
        } catch let error as StorageError {
            guard case .conflict = error else { throw error }
            // Made by a request of theirs in flight at the same time, or the name was taken
            // (in another letter case) meanwhile.
            guard let user = try await storage.user(subject: identity.subject) else { throw taken }
            return user
        }
    }
}

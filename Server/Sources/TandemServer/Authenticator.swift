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
        // The scheme's name is case-insensitive (RFC 9110 §11.1).
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        let text = parts.count == 2 && parts[0].lowercased() == "bearer" ? parts[1].trimmingCharacters(in: .whitespaces) : ""
        var context = context
        let limitKey: String
        if let token = APIToken(text: text) {
            guard let stored = try await storage.token(id: token.id), token.matches(secretHash: stored.secretHash) else {
                throw APIError.unauthorized("unknown or revoked token")
            }
            if stored.scope.hasExpired(at: now()) { throw APIError.tokenExpired }
            context.user = stored.user
            context.tokenID = token.id
            context.scope = stored.scope
            limitKey = token.id
        } else if let jwt, text.split(separator: ".", omittingEmptySubsequences: false).count == 3 {
            let identity = try await jwt.verify(text, now: now())
            let user = try await user(of: identity)
            context.user = user
            context.scope = TokenScope(expiresAt: identity.expiresAt)
            limitKey = "jwt:\(user.id)"
        } else {
            throw APIError.unauthorized(
                jwt == nil
                    ? "malformed bearer token: expected Authorization: Bearer tdm_<id>_<secret>"
                    : "malformed bearer token: expected Authorization: Bearer tdm_<id>_<secret>, or a JWT of the app's sign-in")
        }
        if let wait = await limiter.admit(limitKey) {
            var error = APIError(.tooManyRequests, "rate_limited", "too many requests for this token; retry after \(wait) s")
            error.headers[.retryAfter] = String(wait)
            throw error
        }
        context.logger[metadataKey: "user"] = .string(context.user?.name ?? "")
        return try await next(request, context)
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

import Foundation
import Hummingbird

/// Resolves `Authorization: Bearer tdm_<id>_<secret>` to a user and the token's scope, or
/// answers 401: missing, malformed, unknown, revoked and expired tokens alike (the message
/// says which, never whose).
struct Authenticator: RouterMiddleware {
    let storage: any ServerStorage
    let limiter: RateLimiter
    /// Milliseconds since 1970 (the dependencies' clock): tokens expire by it.
    let now: @Sendable () -> Int64

    func handle(
        _ request: Request, context: TandemRequestContext,
        next: (Request, TandemRequestContext) async throws -> Response
    ) async throws -> Response {
        guard let header = request.headers[.authorization] else {
            throw APIError.unauthorized("missing bearer token: send Authorization: Bearer <token> (tandem-server tokens create NAME)")
        }
        // The scheme's name is case-insensitive (RFC 9110 §11.1).
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer",
            let token = APIToken(text: parts[1].trimmingCharacters(in: .whitespaces))
        else {
            throw APIError.unauthorized("malformed bearer token: expected Authorization: Bearer tdm_<id>_<secret>")
        }
        guard let stored = try await storage.token(id: token.id),
            token.matches(secretHash: stored.secretHash)
        else {
            throw APIError.unauthorized("unknown or revoked token")
        }
        if stored.scope.hasExpired(at: now()) { throw APIError.tokenExpired }
        if let wait = await limiter.admit(token.id) {
            var error = APIError(.tooManyRequests, "rate_limited", "too many requests for this token; retry after \(wait) s")
            error.headers[.retryAfter] = String(wait)
            throw error
        }
        var context = context
        context.user = stored.user
        context.tokenID = token.id
        context.scope = stored.scope
        context.logger[metadataKey: "user"] = .string(stored.user.name)
        return try await next(request, context)
    }
}

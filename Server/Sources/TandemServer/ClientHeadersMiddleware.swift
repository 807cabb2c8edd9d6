import Hummingbird

/// Refuses a `/v1` request whose `Tandem-Client` or `Tandem-Pending` header is malformed
/// (400 `invalid_client`), whatever the endpoint: the headers mean the same on every request,
/// though only pushes, pulls and snapshot pages record them (``ClientActivity``).
///
/// ```swift
/// router.group("v1").add(middleware: authenticator).add(middleware: ClientHeadersMiddleware())
/// ```
struct ClientHeadersMiddleware: RouterMiddleware {
    func handle(
        _ request: Request, context: TandemRequestContext,
        next: (Request, TandemRequestContext) async throws -> Response
    ) async throws -> Response {
        _ = try ClientHeaders(request.headers)
        return try await next(request, context)
    }
}

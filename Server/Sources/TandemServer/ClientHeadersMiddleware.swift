import Hummingbird

/// Reads a `/v1` request's `Tandem-Client` and `Tandem-Pending` headers into
/// ``TandemRequestContext/client`` once, and refuses the request when one is malformed (400
/// `invalid_client`), whatever the endpoint: the headers mean the same on every request,
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
        var context = context
        context.client = try ClientHeaders(request.headers)
        return try await next(request, context)
    }
}

import Hummingbird
import HTTPTypes

/// Puts the server's clock on every answer, errors included: `Tandem-Server-Time`,
/// milliseconds since 1970. Clients stamp their edits with the server's time learned from
/// it, so a machine whose clock is wrong neither stamps ahead of what the server accepts
/// (`clock_skew`) nor so far behind that its edits lose to older ones.
struct ServerTimeMiddleware: RouterMiddleware {
    static let header = HTTPField.Name("Tandem-Server-Time")!
    let now: @Sendable () -> Int64

    func handle(
        _ request: Request, context: TandemRequestContext,
        next: (Request, TandemRequestContext) async throws -> Response
    ) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            response = try error.response(from: request, context: context)
        }
        response.headers[Self.header] = String(now())
        return response
    }
}

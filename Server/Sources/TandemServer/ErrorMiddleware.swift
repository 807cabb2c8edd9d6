import Foundation
import GRDB
import Hummingbird

/// Turns every error that is not already an ``APIError`` into one, so that every answer has
/// the JSON error body: storage conflicts and missing rows are 409/404, an unusable database
/// is 503, anything else 500 (logged with its cause; the client gets no internals).
struct ErrorMiddleware: RouterMiddleware {
    /// The methods of each route (the router answers 404 for a known path with another method).
    static func allowedMethods(_ path: String) -> String? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        switch parts.count {
        case 1 where parts[0] == "health" || parts[0] == "openapi.yaml" || parts[0] == "metrics": return "GET"
        case 2 where parts == ["v1", "datasets"] || parts == ["v1", "capabilities"]: return "GET"
        case 3 where parts[0] == "v1" && parts[1] == "datasets" && !parts[2].isEmpty: return "PUT, DELETE"
        case 4 where parts[0] == "v1" && parts[1] == "datasets" && !parts[2].isEmpty:
            switch parts[3] {
            case "schema": return "GET, PUT"
            case "push": return "POST"
            case "pull", "snapshot", "lag": return "GET"
            case "members": return "GET"
            default: return nil
            }
        case 5 where parts[0] == "v1" && parts[1] == "datasets" && !parts[2].isEmpty && parts[3] == "members" && !parts[4].isEmpty: return "PUT, DELETE"
        default: return nil
        }
    }

    func handle(
        _ request: Request, context: TandemRequestContext,
        next: (Request, TandemRequestContext) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            throw error
        } catch let error as HTTPError {
            if error.status == .notFound, let allowed = Self.allowedMethods(request.uri.path) {
                var answer = APIError(.methodNotAllowed, "method_not_allowed", "\(request.method) is not supported here; use \(allowed)")
                answer.headers[.allow] = allowed
                throw answer
            }
            throw APIError(error.status, "http_error", error.body ?? error.status.reasonPhrase)
        } catch let error as StorageError {
            if case .unavailable = error { context.logger.error("storage unavailable", metadata: ["error": "\(error)"]) }
            throw APIError(error)
        } catch let error as DatabaseError {
            context.logger.error("database error", metadata: ["error": "\(error)"])
            let busy = error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED
            var answer = APIError(.serviceUnavailable, busy ? "busy" : "unavailable", "the server's database is \(busy ? "busy" : "unavailable"); retry later")
            answer.headers[.retryAfter] = "1"
            throw answer
        } catch {
            context.logger.error("unexpected error", metadata: ["error": "\(error)"])
            throw APIError(.internalServerError, "internal", "the server failed; the request id is in its log")
        }
    }
}

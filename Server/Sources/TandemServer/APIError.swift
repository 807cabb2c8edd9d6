public import Foundation
public import Hummingbird
public import TandemWire

/// An error answer: an HTTP status and `{"error": {"code": "…", "message": "…"}}`.
///
/// Every handler failure becomes one of these; bad input never produces a 5xx.
///
/// ```swift
/// throw APIError(.unprocessableContent, "unknown_entity", "changes[3]: entity 'Todo2' is not in schema version 2")
/// ```
public struct APIError: Error, HTTPResponseError, Sendable {
    public var status: HTTPResponse.Status
    public var body: WireErrorBody
    /// Extra response headers (`Retry-After` on 429).
    public var headers: HTTPFields = [:]

    public init(
        _ status: HTTPResponse.Status, _ code: String, _ message: String,
        findings: [WireErrorBody.Finding]? = nil, serverTime: Int64? = nil, maxClockSkew: Int64? = nil
    ) {
        self.status = status
        self.body = WireErrorBody(
            error: .init(code: code, message: Self.bounded(message), findings: findings, serverTime: serverTime, maxClockSkew: maxClockSkew))
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers = self.headers
        headers[.contentType] = "application/json; charset=utf-8"
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(body)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// The longest message an answer carries: messages quote the input they refuse, and an
    /// answer must not grow with it (a 3 MiB column name would come back twice).
    static let maxMessageLength = 1_000

    /// `message`, cut to ``maxMessageLength`` characters with a note that it was.
    static func bounded(_ message: String) -> String {
        guard message.count > maxMessageLength else { return message }
        return message.prefix(maxMessageLength) + "… (cut: \(message.count) characters)"
    }

    static func unauthorized(_ message: String) -> APIError { APIError(.unauthorized, "unauthorized", message) }
    /// A token past its expiry (`tandem-server tokens create --expires`).
    static let tokenExpired = APIError(
        .unauthorized, "token_expired", "the token has expired: ask the operator for a new one (tandem-server tokens create NAME)")
    /// A JWT of the app's sign-in past its `exp`.
    static let jwtExpired = APIError(.unauthorized, "token_expired", "the JWT has expired: sign in again")
    static func notFound(_ message: String) -> APIError { APIError(.notFound, "not_found", message) }
    static func invalid(_ code: String, _ message: String) -> APIError { APIError(.unprocessableContent, code, message) }
    static func badRequest(_ code: String, _ message: String) -> APIError { APIError(.badRequest, code, message) }
}

public import Foundation

/// How the sync engine reaches the server: one HTTP exchange at a time. The engine sees only
/// this protocol; `URLSessionTransport` (target `TandemURLSession`, for apps) and
/// `CurlTransport` (target `TandemCurl`, for the CLI and the daemon) are the live
/// implementations, ``MemoryTransport`` their in-memory twin and ``FaultyTransport`` a
/// fault-injecting wrapper.
///
/// ```swift
/// let transport: any Transport = MemoryTransport { request in
///     TransportResponse(status: 200, body: Data("{}".utf8))
/// }
/// let response = try await transport.send(TransportRequest(method: "GET", path: "/health"))
/// ```
public protocol Transport: Sendable {
    /// Sends `request` and returns the server's answer, whatever its status.
    ///
    /// - Throws: ``SyncError`` with code ``SyncError/Code/unreachable`` when no answer came
    ///   (connection refused, timeout, cut connection), or `CancellationError`.
    func send(_ request: TransportRequest) async throws -> TransportResponse
}

/// One HTTP request, relative to the transport's base URL.
public struct TransportRequest: Sendable, Hashable {
    public var method: String
    /// The path and query, like `/v1/datasets/todos/pull?after=c1.AQ&limit=500`.
    public var path: String
    /// Header names are case-insensitive; the transport adds `Accept-Encoding` itself.
    public var headers: [String: String]
    public var body: Data?

    public init(method: String, path: String, headers: [String: String] = [:], body: Data? = nil) {
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
    }
}

/// An HTTP answer, its body already decompressed.
public struct TransportResponse: Sendable, Hashable {
    public var status: Int
    /// Header names in lowercase.
    public var headers: [String: String]
    public var body: Data

    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { _, last in last })
        self.body = body
    }

    /// The server's clock (`Tandem-Server-Time`, ms), which every answer of a tandem-server
    /// carries, errors included: `nil` for another server's answer (a wrong URL, a proxy's).
    public var serverTime: Int64? { headers["tandem-server-time"].flatMap { Int64($0) } }
}

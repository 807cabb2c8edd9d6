public import Foundation

/// A ``Transport`` that hands each request to a closure: tests route it to an in-process
/// server, or answer it themselves.
///
/// ```swift
/// let transport = MemoryTransport { request in
///     try await router.answer(request)   // the server's router, no sockets
/// }
/// ```
public struct MemoryTransport: Transport {
    let handler: @Sendable (TransportRequest) async throws -> TransportResponse

    public init(_ handler: @escaping @Sendable (TransportRequest) async throws -> TransportResponse) {
        self.handler = handler
    }

    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        try Task.checkCancellation()
        return try await handler(request)
    }
}

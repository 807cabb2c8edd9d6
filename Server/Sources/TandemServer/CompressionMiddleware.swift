import Hummingbird
import HTTPTypes
import TandemGzip

/// Answers gzip to clients that send `Accept-Encoding: gzip`, for bodies of at least
/// `minimumBytes` whose length is known (every JSON answer of the server) and that are not
/// already encoded. Request bodies are inflated where they are read (`Routes.body`).
struct CompressionMiddleware: RouterMiddleware {
    var minimumBytes = 1024

    /// `true` when `Accept-Encoding` lists gzip with a non-zero quality.
    static func acceptsGzip(_ header: String?) -> Bool {
        guard let header else { return false }
        return header.split(separator: ",").contains { item in
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard parts.first == "gzip" || parts.first == "x-gzip" || parts.first == "*" else { return false }
            let quality = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            return quality > 0
        }
    }

    func handle(
        _ request: Request, context: TandemRequestContext,
        next: (Request, TandemRequestContext) async throws -> Response
    ) async throws -> Response {
        var response = try await next(request, context)
        guard Self.acceptsGzip(request.headers[.acceptEncoding]), response.headers[.contentEncoding] == nil,
            let length = response.body.contentLength, length >= minimumBytes
        else {
            return response
        }
        let collector = Collector()
        let body = response.body
        try await body.write(collector)
        // Level 1: wire JSON shrinks nearly as much as at level 6, for a fraction of the CPU.
        let packed = ByteBuffer(bytes: try Gzip.compress(collector.buffer.readableBytesView, level: 1))
        response.headers[.contentEncoding] = "gzip"
        response.headers[.vary] = "Accept-Encoding"
        response.headers[.contentLength] = nil
        response.body = ResponseBody(byteBuffer: packed)
        return response
    }

    /// Gathers a body that is already in memory. A class so the bytes survive the writer
    /// being consumed by `finish`; used by one task only.
    private final class Collector: ResponseBodyWriter {
        var buffer = ByteBuffer()
        func write(_ buffer: ByteBuffer) async throws {
            var buffer = buffer
            self.buffer.writeBuffer(&buffer)
        }
        func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }
}

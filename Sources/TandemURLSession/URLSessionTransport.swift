#if canImport(FoundationNetworking)
    // Linux: URLSession is in FoundationNetworking (swift-corelibs-foundation), not Foundation.
    public import FoundationNetworking
    import Foundation
#else
    public import Foundation  // Apple platforms: URLSession is Foundation's
#endif
import TandemGzip
import TandemLocking
public import TandemSync

/// A ``Transport`` over `URLSession`: the transport for apps on Apple platforms, where libcurl
/// is not something an app links. It builds on Linux too (FoundationNetworking), so the same
/// tests run against it there.
///
/// Created like `CurlTransport` (target `TandemCurl`), from the server's URL as a `String`.
/// Exchanges run on the session's own delegate queue, never on the main actor: an engine can
/// sync from a background task. Cancelling the calling task cancels the `URLSessionTask`.
/// Answers are decompressed (gzip); request bodies of 1 KiB or more are sent gzipped. Proxies,
/// TLS and certificate trust are the platform's (on Apple platforms the system settings, on
/// Linux libcurl's, which reads `https_proxy`, `no_proxy`, …). Nothing is cached and no cookie
/// is kept: every pull reaches the server. Redirects are not followed (as libcurl's transport
/// does not): a push must not turn into a `GET` of another address; the 3xx answer is handed
/// back, and the engine reports it. Point `baseURL` at the server's final address.
///
/// ```swift
/// let transport = try URLSessionTransport(baseURL: "https://sync.example.com")
/// let engine = SyncEngine(container: container, transport: transport, configuration: configuration)
/// ```
///
/// A background `URLSessionConfiguration` (`.background(withIdentifier:)`) cannot run data
/// tasks; to sync while the app is in the background, run ``SyncEngine/sync()`` from a
/// background task of the app (`BGAppRefreshTask`, `beginBackgroundTask`) with this transport.
public final class URLSessionTransport: Transport {
    /// Seconds a whole exchange may take (the transport cancels it then; also
    /// `timeoutIntervalForResource`).
    public let timeout: Double
    /// Seconds without a byte in either direction before an exchange fails
    /// (`timeoutIntervalForRequest`); a live sync's waiting pull must ask for less.
    public let idleTimeout: Double
    let baseURL: String
    private let session: URLSession

    /// - Parameters:
    ///   - baseURL: the server, `http://host:port` or `https://host`.
    ///   - timeout: seconds a whole exchange may take.
    ///   - idleTimeout: seconds an exchange may go without a byte, whole seconds, at least 1
    ///     (a waiting pull waits silently: keep `runLive`'s `wait` under it).
    ///   - configuration: the session's settings to start from (proxies, TLS, HTTP/2,
    ///     `allowsCellularAccess`, …); the transport turns off caching and cookies, does not
    ///     wait for connectivity (the engine retries with its own backoff) and sets the timeouts.
    /// - Throws: ``SyncError`` with code `misconfigured` when `baseURL` is not an http(s) URL.
    public init(
        baseURL: String, timeout: Double = 120, idleTimeout: Double = 60,
        configuration: URLSessionConfiguration = .ephemeral
    ) throws {
        guard let url = URL(string: baseURL), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host() != nil else {
            throw SyncError(.misconfigured, "'\(baseURL)' is not a server URL; use http://host:port or https://host")
        }
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.timeout = timeout
        // FoundationNetworking counts it in whole seconds (0.5 would be no limit at all).
        self.idleTimeout = max(idleTimeout.rounded(.up), 1)
        // A copy: the caller's configuration object stays as it was.
        let configuration = (configuration.copy() as? URLSessionConfiguration) ?? configuration
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        #if !canImport(FoundationNetworking)
            // Apple platforms: fail at once without a network (FoundationNetworking never waits
            // and has the property read-only).
            configuration.waitsForConnectivity = false
        #endif
        configuration.timeoutIntervalForRequest = self.idleTimeout
        configuration.timeoutIntervalForResource = timeout
        // A nil delegate queue: the session makes a serial queue of its own for the handlers.
        session = URLSession(configuration: configuration, delegate: NoRedirects(), delegateQueue: nil)
    }

    deinit { session.finishTasksAndInvalidate() }

    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        try Task.checkCancellation()
        let target = baseURL + request.path
        guard let url = URL(string: target) else {
            throw SyncError(.misconfigured, "'\(target)' is not a URL; the request's path must be percent-encoded")
        }
        var urlRequest = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: idleTimeout)
        let method = request.method.uppercased()
        urlRequest.httpMethod = method
        var body = request.body
        var headers = request.headers
        if let plain = body, plain.count >= 1024, headers.keys.allSatisfy({ $0.lowercased() != "content-encoding" }),
            let packed = try? Gzip.compress(plain, level: 1)
        {  // level 1: most of the size gain at a fraction of level 6's CPU (as CurlTransport)
            body = Data(packed)
            headers["Content-Encoding"] = "gzip"
        }
        // Sorted, as CurlTransport sends them: of two names differing only in case, the same
        // one wins every time.
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { urlRequest.setValue(value, forHTTPHeaderField: name) }
        if method != "GET" { urlRequest.httpBody = body ?? Data() }
        let (exchange, timeout) = (Exchange(), self.timeout)
        // The whole exchange's limit, kept here: FoundationNetworking (Linux) does not enforce
        // `timeoutIntervalForResource`.
        let deadline = Task {
            try? await Task.sleep(for: .seconds(timeout))
            if !Task.isCancelled { exchange.end(.timedOut) }
        }
        defer { deadline.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<TransportResponse, any Error>) in
                let task = session.dataTask(with: urlRequest) { data, response, error in
                    let ending = exchange.finished()
                    continuation.resume(with: Result { try Self.answer(data, response, error, ending: ending, timeout: timeout, method: method, url: target) })
                }
                exchange.start(task)
            }
        } onCancel: {
            exchange.end(.cancelled)
        }
    }

    /// The transport's answer for what the data task's handler got.
    private static func answer(
        _ data: Data?, _ response: URLResponse?, _ error: (any Error)?, ending: Exchange.Ending, timeout: Double, method: String,
        url: String
    ) throws
        -> TransportResponse
    {
        switch ending {
        case .cancelled: throw CancellationError()
        case .timedOut: throw SyncError(.unreachable, "\(method) \(url): no whole answer within \(String(format: "%g", timeout)) s (the transport's timeout)")
        case .answered: break
        }
        if let error { throw syncError(for: error, method: method, url: url) }
        guard let http = response as? HTTPURLResponse else {
            throw SyncError(.invalidResponse, "\(method) \(url): the answer is not HTTP")
        }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
        }
        var body = data ?? Data()
        // URLSession inflates a gzip answer itself (on Apple platforms, and on Linux through
        // libcurl); should a platform hand it over still packed, it is inflated here.
        if headers["content-encoding"]?.lowercased() == "gzip", body.starts(with: [0x1f, 0x8b]) {
            do {
                body = Data(try Gzip.decompress(body, limit: 1 << 30))
            } catch {
                throw SyncError(.invalidResponse, "\(method) \(url): the gzip answer is corrupt (\(error))")  // as CurlTransport says it
            }
        }
        return TransportResponse(status: http.statusCode, headers: headers, body: body)
    }

    /// What a failed exchange is to the engine: a network failure is `unreachable` (retried);
    /// a server whose certificate is not trusted, a plain `http` server where the platform
    /// requires TLS (App Transport Security) or a bad URL is `misconfigured` (retrying does
    /// not help; the message says what to fix); an answer that cannot be decoded is
    /// `invalidResponse` (a bad server response, which is also how a connection closed
    /// without an answer shows, is `unreachable`).
    static func syncError(for error: any Error, method: String, url: String) -> SyncError {
        let failure = "\(method) \(url): \(error.localizedDescription)"
        guard let error = error as? URLError else { return SyncError(.unreachable, failure) }
        let text = "\(failure) (URLError \(error.code.rawValue))"
        switch error.code {
        case .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid:
            return SyncError(.misconfigured, "\(text): the server's TLS certificate is not trusted here; give it a certificate this device trusts")
        case .clientCertificateRejected, .clientCertificateRequired:
            return SyncError(.misconfigured, "\(text): the server asks for a client certificate, which this transport does not send")
        case .appTransportSecurityRequiresSecureConnection:
            return SyncError(.misconfigured, "\(text): the platform allows only https here; serve the sync server over TLS")
        case .badURL, .unsupportedURL:
            return SyncError(.misconfigured, "\(text): use http://host:port or https://host")
        case .cannotDecodeContentData, .cannotDecodeRawData, .cannotParseResponse:
            return SyncError(.invalidResponse, "\(text): the server's answer could not be read")
        case .badServerResponse:
            // Also what FoundationNetworking reports for a connection closed with no answer
            // (libcurl's "got nothing": a server restarting, a kept-alive connection it had
            // closed): transient, as libcurl's own code is in CurlTransport.
            return SyncError(.unreachable, text)
        default:
            return SyncError(.unreachable, text)
        }
    }

    /// Hands a redirect back as the answer instead of following it.
    final class NoRedirects: NSObject, URLSessionTaskDelegate, Sendable {
        func urlSession(
            _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
            newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
        ) {
            completionHandler(nil)
        }
    }

    /// One exchange's data task: cancelled with the calling task (a cancellation that comes
    /// before the task exists cancels it as it starts), or when its deadline passes.
    final class Exchange: Sendable {
        enum Ending: Sendable {
            case answered, cancelled, timedOut
        }

        private struct State {
            var task: URLSessionDataTask?
            var ending: Ending?
        }
        // The lock guards the task and how the exchange ends; the task's own methods may be
        // called from any thread (Foundation documents `URLSessionTask` so).
        private let state = Locked(State())

        /// Starts `task` (at once cancelled when the exchange has already ended).
        func start(_ task: URLSessionDataTask) {
            let ended = state.withLock { state in
                state.task = task
                return state.ending != nil
            }
            if ended { task.cancel() }
            task.resume()
        }

        /// Cancels the task (the calling task was cancelled, or the deadline passed).
        func end(_ ending: Ending) {
            let task = state.withLock { state in
                if state.ending == nil { state.ending = ending }
                return state.task
            }
            task?.cancel()
        }

        /// How the exchange ended, when the data task's handler runs.
        func finished() -> Ending {
            state.withLock { state in
                if state.ending == nil { state.ending = .answered }
                return state.ending ?? .answered
            }
        }
    }
}

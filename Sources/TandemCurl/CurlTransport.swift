import CCurl
import Dispatch
import Foundation
import Synchronization
import TandemGzip
public import TandemSync

/// The live ``Transport``: HTTP(S) through libcurl, the only code that imports it.
///
/// Up to `connections` connections are kept alive and reused (requests sent side by side
/// take turns over them). Each transfer runs on its connection's own dispatch queue, never on
/// the Swift cooperative pool; cancelling the calling task aborts the transfer. Answers are decompressed (gzip), request bodies of
/// 1 KiB or more are sent gzipped, proxies come from the environment (`https_proxy`,
/// `no_proxy`, … as curl reads them), and the URL's scheme decides HTTPS.
///
/// ```swift
/// let transport = try CurlTransport(baseURL: "http://127.0.0.1:8080")
/// let engine = SyncEngine(container: container, transport: transport, configuration: configuration)
/// ```
public final class CurlTransport: Transport {
    /// Seconds to wait for a connection.
    public let connectTimeout: Double
    /// Seconds a whole exchange may take.
    public let timeout: Double
    let baseURL: String
    /// One serial queue per connection: a curl handle is used by one thread at a time.
    private let lanes: [(queue: DispatchQueue, connection: Connection)]
    private let next = Atomic<Int>(0)

    /// - Throws: ``SyncError`` with code `misconfigured` when `baseURL` is not an http(s) URL.
    public init(baseURL: String, connectTimeout: Double = 10, timeout: Double = 120, connections: Int = 4) throws {
        guard let url = URL(string: baseURL), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host() != nil else {
            throw SyncError(.misconfigured, "'\(baseURL)' is not a server URL; use http://host:port or https://host")
        }
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.connectTimeout = connectTimeout
        self.timeout = timeout
        lanes = (0..<max(connections, 1)).map { (DispatchQueue(label: "tandem.curl.\($0)"), Connection()) }
    }

    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        try Task.checkCancellation()
        let cancelled = Cancellation()
        let url = baseURL + request.path
        let lane = lanes[next.wrappingAdd(1, ordering: .relaxed).oldValue % lanes.count]
        let (queue, connection) = lane
        let (connectTimeout, timeout) = (self.connectTimeout, self.timeout)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<TransportResponse, any Error>) in
                queue.async {
                    continuation.resume(
                        with: Result {
                            try connection.perform(request, url: url, connectTimeout: connectTimeout, timeout: timeout, cancelled: cancelled)
                        })
                }
            }
        } onCancel: {
            cancelled.flag.store(true, ordering: .relaxed)
        }
    }

    /// Set when the calling task is cancelled; the transfer's progress callback aborts.
    final class Cancellation: Sendable {
        let flag = Atomic<Bool>(false)
    }

    /// One curl easy handle. `@unchecked Sendable`: it is created once and then used only
    /// inside `CurlTransport.queue`'s blocks (a serial queue), so no two threads touch the
    /// handle or the buffers at the same time.
    final class Connection: @unchecked Sendable {
        private let handle: UnsafeMutableRawPointer?
        private static let globalInit: Void = { curl_global_init(Int(CURL_GLOBAL_DEFAULT)) }()

        init() {
            _ = Self.globalInit
            handle = curl_easy_init()
        }

        deinit { if let handle { curl_easy_cleanup(handle) } }

        /// What the callbacks fill during one transfer.
        final class Exchange {
            var body = Data()
            var headers: [String: String] = [:]
            var cancelled: Cancellation
            init(cancelled: Cancellation) { self.cancelled = cancelled }
        }

        func perform(
            _ request: TransportRequest, url: String, connectTimeout: Double, timeout: Double,
            cancelled: Cancellation
        ) throws -> TransportResponse {
            guard let handle else { throw SyncError(.unreachable, "libcurl could not start a transfer") }
            curl_easy_reset(handle)
            let exchange = Exchange(cancelled: cancelled)
            let context = Unmanaged.passUnretained(exchange).toOpaque()
            var headerList: UnsafeMutablePointer<curl_slist>?
            defer { curl_slist_free_all(headerList) }
            var body = request.body
            var headers = request.headers
            if let plain = body, plain.count >= 1024, headers.keys.allSatisfy({ $0.lowercased() != "content-encoding" }),
                let packed = try? Gzip.compress(plain, level: 1)
            {  // level 1: most of the size gain at a fraction of level 6's CPU
                body = Data(packed)
                headers["Content-Encoding"] = "gzip"
            }
            headers["Expect"] = ""  // no 100-continue round trip
            for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
                headerList = curl_slist_append(headerList, value.isEmpty ? "\(name):" : "\(name): \(value)")
            }
            _ = tandem_curl_setopt_string(handle, CURLOPT_URL, url)
            _ = tandem_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
            _ = tandem_curl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, Int(connectTimeout * 1000))
            _ = tandem_curl_setopt_long(handle, CURLOPT_TIMEOUT_MS, Int(timeout * 1000))
            _ = tandem_curl_setopt_string(handle, CURLOPT_ACCEPT_ENCODING, "")  // every encoding curl decodes
            _ = tandem_curl_setopt_pointer(handle, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(headerList))
            _ = tandem_curl_setopt_data_callback(handle, CURLOPT_WRITEFUNCTION) { data, size, count, context in
                let exchange = Unmanaged<Exchange>.fromOpaque(context!).takeUnretainedValue()
                if let data { exchange.body.append(UnsafeRawPointer(data).assumingMemoryBound(to: UInt8.self), count: size * count) }
                return size * count
            }
            _ = tandem_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, context)
            _ = tandem_curl_setopt_data_callback(handle, CURLOPT_HEADERFUNCTION) { data, size, count, context in
                let exchange = Unmanaged<Exchange>.fromOpaque(context!).takeUnretainedValue()
                if let data {
                    let line = String(decoding: UnsafeRawBufferPointer(start: data, count: size * count), as: UTF8.self)
                    if let colon = line.firstIndex(of: ":") {
                        exchange.headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines)
                    } else if line.hasPrefix("HTTP/") {
                        exchange.headers = [:]  // a new response (after a redirect or 100)
                    }
                }
                return size * count
            }
            _ = tandem_curl_setopt_pointer(handle, CURLOPT_HEADERDATA, context)
            _ = tandem_curl_setopt_long(handle, CURLOPT_NOPROGRESS, 0)
            _ = tandem_curl_setopt_progress_callback(handle) { context, _, _, _, _ in
                let exchange = Unmanaged<Exchange>.fromOpaque(context!).takeUnretainedValue()
                return exchange.cancelled.flag.load(ordering: .relaxed) ? 1 : 0
            }
            _ = tandem_curl_setopt_pointer(handle, CURLOPT_XFERINFODATA, context)
            let method = request.method.uppercased()
            if method == "GET" {
                _ = tandem_curl_setopt_long(handle, CURLOPT_HTTPGET, 1)
            } else {
                _ = tandem_curl_setopt_string(handle, CURLOPT_CUSTOMREQUEST, method)
            }
            let code: CURLcode =
                try (body ?? (method == "GET" ? nil : Data())).map { payload in
                    try payload.withUnsafeBytes { bytes in
                        _ = tandem_curl_setopt_off(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(bytes.count))
                        _ = tandem_curl_setopt_pointer(
                            handle, CURLOPT_POSTFIELDS,
                            UnsafeMutableRawPointer(mutating: bytes.baseAddress ?? UnsafeRawPointer(("" as StaticString).utf8Start)))
                        return try Self.run(handle)
                    }
                } ?? Self.run(handle)
            if code == CURLE_ABORTED_BY_CALLBACK || exchange.cancelled.flag.load(ordering: .relaxed) { throw CancellationError() }
            guard code == CURLE_OK else {
                let text = "\(request.method) \(url): \(String(cString: curl_easy_strerror(code))) (curl error \(code.rawValue))"
                switch code {
                case CURLE_PEER_FAILED_VERIFICATION:
                    // Retrying does not help (as URLSessionTransport says it).
                    throw SyncError(.misconfigured, "\(text): the server's TLS certificate is not trusted here; give it a certificate this machine trusts")
                case CURLE_SSL_CACERT_BADFILE:
                    throw SyncError(
                        .misconfigured,
                        "\(text): this machine's CA certificates cannot be read; install them (Debian: apt-get install ca-certificates)")
                case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT:
                    throw SyncError(.misconfigured, "\(text): use http://host:port or https://host")
                case CURLE_BAD_CONTENT_ENCODING:
                    throw SyncError(.invalidResponse, "\(text): the server's answer could not be read")
                default:
                    throw SyncError(.unreachable, text)
                }
            }
            var status = 0
            _ = tandem_curl_response_code(handle, &status)
            return TransportResponse(status: status, headers: exchange.headers, body: exchange.body)
        }

        private static func run(_ handle: UnsafeMutableRawPointer) throws -> CURLcode {
            curl_easy_perform(handle)
        }
    }
}

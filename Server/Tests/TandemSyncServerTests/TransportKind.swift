import Testing
import TandemCurl
import TandemSync
import TandemURLSession

/// The two live transports; the engine's tests against a real server run over each.
enum TransportKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// libcurl: the CLI's and the daemon's.
    case curl
    /// URLSession (FoundationNetworking here): the apps'.
    case urlSession

    var testDescription: String { rawValue }

    /// A transport of this kind to `base`; `timeout` is the whole exchange's limit.
    func make(_ base: String, timeout: Double = 120) throws -> any Transport {
        switch self {
        case .curl: try CurlTransport(baseURL: base, connectTimeout: min(timeout, 10), timeout: timeout)
        case .urlSession: try URLSessionTransport(baseURL: base, timeout: timeout, idleTimeout: min(timeout, 60))
        }
    }
}

public import Foundation
import NIOConcurrencyHelpers
#if canImport(FoundationNetworking)
    // URLSession on Linux lives in FoundationNetworking.
    import FoundationNetworking
#endif

/// Where the identity provider's signing keys (a JWKS document) come from: read again when
/// ``JWTVerifier`` refreshes them or meets a key id it does not know (key rotation).
///
/// ```swift
/// let source = try JWKSSources.live("https://login.example.com/.well-known/jwks.json")
/// let json = try await source.fetch()
/// ```
public protocol JWKSSource: Sendable {
    /// The file or URL, for messages.
    var location: String { get }
    /// The JWKS document's bytes.
    ///
    /// - Throws: when it cannot be read (a missing file, an unreachable URL, a non-200 answer).
    func fetch() async throws -> Data
}

/// The live sources, by what `--jwks` says.
public enum JWKSSources {
    /// A JWKS in a file, or at an `https://` URL (`http://` only on loopback).
    ///
    /// - Throws: ``StorageError/unavailable(_:)`` for a URL of another scheme.
    public static func live(_ text: String) throws -> any JWKSSource {
        guard text.contains("://") else { return FileJWKSSource(path: text) }
        guard let url = URL(string: text), let host = url.host(), let scheme = url.scheme?.lowercased(),
            scheme == "https" || (scheme == "http" && ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host))
        else {
            throw StorageError.unavailable("--jwks \(text) is neither a file nor an https:// URL (http:// only on loopback)")
        }
        return URLJWKSSource(url: url)
    }
}

/// A JWKS document in a file.
public struct FileJWKSSource: JWKSSource {
    public var path: String
    public var location: String { path }
    public init(path: String) { self.path = path }
    public func fetch() async throws -> Data {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw StorageError.unavailable("cannot read the JWKS file \(path) (missing, a directory, or not readable)")
        }
        return data
    }
}

/// A JWKS document at a URL, fetched with URLSession (10 s timeout).
public struct URLJWKSSource: JWKSSource {
    public var url: URL
    public var location: String { url.absoluteString }
    public init(url: URL) { self.url = url }

    /// A session of its own: 10 s for an answer to start, 15 s for the whole document.
    private static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 10
        configuration.timeoutIntervalForResource = 15
        return URLSession(configuration: configuration)
    }()

    public func fetch() async throws -> Data {
        var request = URLRequest(url: url, timeoutInterval: 10)
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await Self.session.data(for: request)
        } catch let error as URLError {
            throw StorageError.unavailable("cannot fetch the JWKS at \(url.absoluteString): \(Self.describe(error))")
        }
        guard let status = (response as? HTTPURLResponse)?.statusCode, status == 200 else {
            throw StorageError.unavailable("GET \(url.absoluteString) answered \((response as? HTTPURLResponse)?.statusCode ?? 0)")
        }
        return data
    }
}

extension URLJWKSSource {
    /// What went wrong, in words (URLError's own description is often "(null)" on Linux).
    static func describe(_ error: URLError) -> String {
        switch error.code {
        case .timedOut: "no answer in time"
        case .cannotConnectToHost: "the connection was refused"
        case .cannotFindHost, .dnsLookupFailed: "the host name does not resolve"
        case .notConnectedToInternet, .networkConnectionLost: "the network is down"
        case .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid,
            .secureConnectionFailed:
            "the TLS connection failed (certificate or handshake)"
        default: "network error \(error.code.rawValue)"
        }
    }
}

/// A JWKS held in memory: the twin of the live sources, for tests (``set(_:)`` rotates keys).
public final class MemoryJWKSSource: JWKSSource {
    // The document and the fetch count, behind one lock (NIOLockedValueBox is Sendable).
    private let state: NIOLockedValueBox<(json: Data, fetches: Int)>
    public var location: String { "memory" }
    public init(_ json: Data) { state = NIOLockedValueBox((json, 0)) }
    public func set(_ json: Data) { state.withLockedValue { $0.json = json } }
    /// How many times it was fetched.
    public var fetches: Int { state.withLockedValue { $0.fetches } }
    public func fetch() async throws -> Data {
        state.withLockedValue {
            $0.fetches += 1
            return $0.json
        }
    }
}

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
    public func fetch() async throws -> Data { try Data(contentsOf: URL(filePath: path)) }
}

/// A JWKS document at a URL, fetched with URLSession (10 s timeout).
public struct URLJWKSSource: JWKSSource {
    public var url: URL
    public var location: String { url.absoluteString }
    public init(url: URL) { self.url = url }

    public func fetch() async throws -> Data {
        var request = URLRequest(url: url, timeoutInterval: 10)
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        let (data, response) = try await URLSession.shared.data(for: request)
        guard let status = (response as? HTTPURLResponse)?.statusCode, status == 200 else {
            throw StorageError.unavailable("GET \(url.absoluteString) answered \((response as? HTTPURLResponse)?.statusCode ?? 0)")
        }
        return data
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

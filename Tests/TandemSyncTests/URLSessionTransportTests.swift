import Foundation
import Testing
import TandemSync
@testable import TandemURLSession

#if canImport(FoundationNetworking)
    import FoundationNetworking  // URLError on Linux
#endif

/// What `URLSessionTransport` makes of its settings and of URLSession's failures, without a
/// network (its exchanges are tested against a real server in Server/'s TransportTests).
struct URLSessionTransportTests {
    @Test func failuresRetryingCannotFixAreMisconfiguredAndTheRestUnreachable() {
        func code(_ code: URLError.Code) -> SyncError.Code {
            URLSessionTransport.syncError(for: URLError(code), method: "POST", url: "https://sync.example.com/v1/x").code
        }
        for untrusted in [URLError.Code.serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid] {
            #expect(code(untrusted) == .misconfigured, "\(untrusted)")
        }
        #expect(code(.appTransportSecurityRequiresSecureConnection) == .misconfigured)
        #expect(code(.clientCertificateRequired) == .misconfigured)
        #expect(code(.unsupportedURL) == .misconfigured)
        #expect(code(.cannotParseResponse) == .invalidResponse)
        // A bad server response too: FoundationNetworking says so of a connection closed
        // with no answer (a server restarting).
        for network in [URLError.Code.timedOut, .cannotConnectToHost, .networkConnectionLost, .notConnectedToInternet, .dnsLookupFailed, .secureConnectionFailed, .badServerResponse] {
            #expect(code(network) == .unreachable, "\(network)")
        }
        let untrusted = URLSessionTransport.syncError(for: URLError(.serverCertificateUntrusted), method: "POST", url: "https://sync.example.com/v1/x")
        #expect(!untrusted.isTransient)
        #expect(untrusted.message.contains("https://sync.example.com/v1/x") && untrusted.message.contains("certificate"))
        #expect(URLSessionTransport.syncError(for: CocoaError(.fileNoSuchFile), method: "GET", url: "u").code == .unreachable)
    }

    @Test func theIdleTimeoutIsWholeSecondsOfAtLeastOne() throws {
        #expect(try URLSessionTransport(baseURL: "http://127.0.0.1:1", idleTimeout: 0.2).idleTimeout == 1)
        #expect(try URLSessionTransport(baseURL: "http://127.0.0.1:1", idleTimeout: 2.5).idleTimeout == 3)
        #expect(try URLSessionTransport(baseURL: "http://127.0.0.1:1/").baseURL == "http://127.0.0.1:1")
    }

    @Test func aBaseURLThatIsNoServerIsMisconfigured() {
        for bad in ["", "sync.example.com", "ftp://example.com", "http://", "file:///tmp/x"] {
            #expect(throws: SyncError.self, "\(bad)") { try URLSessionTransport(baseURL: bad) }
        }
    }
}

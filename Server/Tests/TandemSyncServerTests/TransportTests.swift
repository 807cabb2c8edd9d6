import Foundation
import Hummingbird
import HummingbirdTesting
import HTTPTypes
import Logging
import NIOConcurrencyHelpers
import Testing
import TandemGzip
import TandemSync
import TandemURLSession

/// Each live transport against a real HTTP server on loopback (Hummingbird, `.live`): what it
/// sends and what it hands back, byte for byte, and how it fails.
@Suite("Transports on the wire")
struct TransportTests {
    /// What the test server saw of the last requests, by the id each carries.
    final class Seen: Sendable {
        let requests = NIOLockedValueBox<[String: (encoding: String?, body: [UInt8])]>([:])
        let closed = NIOLockedValueBox<Int>(0)
    }

    /// Routes that echo, pack, stall and fail; `body` runs with the server's base URL.
    static func withServer(_ body: @escaping @Sendable (String, Seen) async throws -> Void) async throws {
        let seen = Seen()
        let router = Router()
        router.on("/echo/{id}", method: .post) { request, context -> Response in
            let id = context.parameters.get("id") ?? ""
            let encoding = request.headers[.contentEncoding]
            var bytes = Array(try await request.body.collect(upTo: 64 << 20).readableBytesView)
            if encoding == "gzip" { bytes = try Gzip.decompress(bytes, limit: 64 << 20) }
            seen.requests.withLockedValue { $0[id] = (encoding, bytes) }
            var headers = HTTPFields()
            headers[HTTPField.Name("X-Echo-Method")!] = request.method.rawValue
            headers[HTTPField.Name("X-Echo-Token")!] = request.headers[.authorization] ?? ""
            return Response(status: .created, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
        }
        router.on("/echo/{id}", method: .delete) { request, context -> Response in
            Response(status: .noContent, headers: [HTTPField.Name("X-Echo-Method")!: request.method.rawValue])
        }
        // Packed only for a client that says it takes gzip, as the server's compression does.
        router.get("/packed") { request, _ -> Response in
            guard request.headers[.acceptEncoding]?.contains("gzip") == true else {
                return Response(status: .notAcceptable, body: .init(byteBuffer: ByteBuffer(string: "say Accept-Encoding: gzip")))
            }
            let packed = try Gzip.compress(Self.document, level: 6)
            return Response(
                status: .ok, headers: [.contentEncoding: "gzip", .contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(bytes: packed)))
        }
        // Says gzip, is not.
        router.get("/corrupt") { _, _ -> Response in
            Response(
                status: .ok, headers: [.contentEncoding: "gzip"],
                body: .init(byteBuffer: ByteBuffer(bytes: [0x1f, 0x8b, 0x08, 0x00] + Array("not gzip at all, not at all".utf8))))
        }
        router.get("/status/{code}") { _, context -> Response in
            let code = context.parameters.get("code", as: Int.self) ?? 500
            return Response(
                status: HTTPResponse.Status(code: code), headers: [HTTPField.Name("Retry-After")!: "7"],
                body: .init(byteBuffer: ByteBuffer(string: #"{"error":"planted"}"#)))
        }
        router.get("/stall/{ms}") { _, context -> Response in
            try await Task.sleep(for: .milliseconds(context.parameters.get("ms", as: Int.self) ?? 0))
            return Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: "late")))
        }
        // What a Bearer server answers a bad token with (RFC 6750): a challenge header.
        router.get("/challenge") { _, _ -> Response in
            Response(
                status: .unauthorized, headers: [.wwwAuthenticate: #"Bearer realm="tandem", error="invalid_token""#],
                body: .init(byteBuffer: ByteBuffer(string: #"{"error":"unauthorized"}"#)))
        }
        // An answer cut short: 10 of the 1 000 bytes it announced, then the connection closes.
        router.get("/cut") { _, _ -> Response in
            Response(
                status: .ok,
                body: ResponseBody(contentLength: 1_000) { writer in
                    try await writer.write(ByteBuffer(string: "0123456789"))
                    throw CancellationError()
                })
        }
        router.on("/moved", method: .post) { _, _ -> Response in
            Response(status: .found, headers: [.location: "/packed"])
        }
        // A byte every 50 ms for 60 s: a write fails once the client has gone.
        router.get("/drip") { _, _ -> Response in
            Response(
                status: .ok,
                body: ResponseBody { writer in
                    do {
                        for _ in 0..<1_200 {
                            try await writer.write(ByteBuffer(string: "."))
                            try await Task.sleep(for: .milliseconds(50))
                        }
                    } catch {
                        seen.closed.withLockedValue { $0 += 1 }
                        throw error
                    }
                    try await writer.finish(nil)
                })
        }
        let app = Application(router: router, logger: Logger(label: "transport", factory: { _ in SwiftLogNoOpLogHandler() }))
        try await app.test(.live) { client in
            try await body("http://127.0.0.1:\(try #require(client.port))", seen)
        }
    }

    /// 200 KiB of JSON-ish text: big enough to be packed, varied enough to check byte for byte.
    static let document: [UInt8] = Array((0..<8_000).map { #"{"n":\#($0),"t":"todo \#($0 * 7919 % 10_007)"},"# }.joined().utf8)

    @Test(arguments: TransportKind.allCases)
    func answersCarryStatusHeadersAndBodyAsSent(kind: TransportKind) async throws {
        try await Self.withServer { base, seen in
            let transport = try kind.make(base)
            let small = TransportRequest(method: "POST", path: "/echo/small?x=1", headers: ["Authorization": "Bearer t"], body: Data("hi".utf8))
            let answer = try await transport.send(small)
            #expect(answer.status == 201)
            #expect(answer.body == Data("hi".utf8))
            #expect(answer.headers["x-echo-method"] == "POST", "header names come back lowercased: \(answer.headers)")
            #expect(answer.headers["x-echo-token"] == "Bearer t", "the request's headers reach the server")
            #expect(seen.requests.withLockedValue { $0["small"]?.encoding } == nil, "a body under 1 KiB is sent as it is")

            let gone = try await transport.send(TransportRequest(method: "DELETE", path: "/echo/x"))
            #expect(gone.status == 204 && gone.headers["x-echo-method"] == "DELETE" && gone.body.isEmpty)

            let refused = try await transport.send(TransportRequest(method: "GET", path: "/status/429"))
            #expect(refused.status == 429, "a refusal is an answer, not an error")
            #expect(refused.headers["retry-after"] == "7")
            #expect(refused.body == Data(#"{"error":"planted"}"#.utf8))
        }
    }

    @Test(arguments: TransportKind.allCases)
    func bodiesOfAKilobyteOrMoreTravelGzipped(kind: TransportKind) async throws {
        try await Self.withServer { base, seen in
            let transport = try kind.make(base)
            let answer = try await transport.send(TransportRequest(method: "POST", path: "/echo/big", body: Data(Self.document)))
            #expect(answer.status == 201)
            let received = try #require(seen.requests.withLockedValue { $0["big"] })
            #expect(received.encoding == "gzip")
            #expect(received.body == Self.document, "the server inflates exactly what was sent")
            #expect(answer.body == Data(Self.document))
        }
    }

    @Test(arguments: TransportKind.allCases)
    func gzipAnswersArriveInflated(kind: TransportKind) async throws {
        try await Self.withServer { base, _ in
            let answer = try await kind.make(base).send(TransportRequest(method: "GET", path: "/packed"))
            #expect(answer.status == 200)
            #expect(answer.body == Data(Self.document))
        }
    }

    /// An answer that says gzip and is not is an error, never handed over as data.
    @Test(arguments: TransportKind.allCases)
    func aCorruptGzipAnswerIsAnError(kind: TransportKind) async throws {
        try await Self.withServer { base, _ in
            await #expect { try await kind.make(base).send(TransportRequest(method: "GET", path: "/corrupt")) } throws: { error in
                // libcurl names it (invalidResponse); FoundationNetworking reports an unknown
                // URLError (-1), which is unreachable.
                [.invalidResponse, .unreachable].contains((error as? SyncError)?.code)
            }
        }
    }

    @Test(arguments: TransportKind.allCases)
    func requestsSentSideBySideEachGetTheirOwnAnswer(kind: TransportKind) async throws {
        try await Self.withServer { base, _ in
            let transport = try kind.make(base)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for n in 0..<24 {
                    group.addTask {
                        let body = Data((n % 3 == 0 ? Self.document : Array("request \(n)".utf8)) + Array("#\(n)".utf8))
                        let answer = try await transport.send(TransportRequest(method: "POST", path: "/echo/\(n)", body: body))
                        #expect(answer.body == body, "request \(n)")
                    }
                }
                try await group.waitForAll()
            }
        }
    }

    @Test(arguments: TransportKind.allCases)
    func anExchangePastItsTimeoutFailsAsUnreachable(kind: TransportKind) async throws {
        try await Self.withServer { base, _ in
            // Bounds far from the figures they tell apart: a loaded machine (the suite runs
            // hundreds of tests at once on 2 cores) adds seconds to each.
            let transport = try kind.make(base, timeout: 1)
            let started = ContinuousClock.now
            await #expect { try await transport.send(TransportRequest(method: "GET", path: "/stall/20000")) } throws: { error in
                (error as? SyncError)?.code == .unreachable && (error as? SyncError)?.isTransient == true
            }
            #expect(ContinuousClock.now - started < .seconds(12), "the timeout (1 s), not the answer (20 s), ended it")
            // Under the timeout, a slow answer is an answer.
            let slow = try await kind.make(base, timeout: 60).send(TransportRequest(method: "GET", path: "/stall/1500"))
            #expect(slow.status == 200 && slow.body == Data("late".utf8))
        }
    }

    /// A 401 with a `WWW-Authenticate` challenge is an answer like any other (URLSession
    /// would otherwise ask for credentials, and on Linux wait for them forever).
    @Test(arguments: TransportKind.allCases)
    func aChallengeIsAnAnswer(kind: TransportKind) async throws {
        try await Self.withServer { base, _ in
            let started = ContinuousClock.now
            let answer = try await kind.make(base, timeout: 60).send(TransportRequest(method: "GET", path: "/challenge", headers: ["Authorization": "Bearer bad"]))
            #expect(answer.status == 401)
            #expect(answer.headers["www-authenticate"]?.hasPrefix("Bearer") == true)
            #expect(answer.body == Data(#"{"error":"unauthorized"}"#.utf8))
            #expect(ContinuousClock.now - started < .seconds(30), "answered, not left waiting for credentials until the timeout (60 s)")
        }
    }

    /// A connection that closes before the whole answer came is `unreachable` (transient: the
    /// engine retries), not a short answer.
    @Test(arguments: TransportKind.allCases)
    func anAnswerCutShortIsUnreachable(kind: TransportKind) async throws {
        try await Self.withServer { base, _ in
            await #expect { try await kind.make(base, timeout: 10).send(TransportRequest(method: "GET", path: "/cut")) } throws: { error in
                (error as? SyncError)?.code == .unreachable
            }
        }
    }

    /// A push to an address that redirects gets the redirect as its answer: followed, it
    /// would become a `GET` of the other address.
    @Test(arguments: TransportKind.allCases)
    func redirectsComeBackAsAnswers(kind: TransportKind) async throws {
        try await Self.withServer { base, _ in
            let answer = try await kind.make(base).send(TransportRequest(method: "POST", path: "/moved", body: Data("x".utf8)))
            #expect(answer.status == 302)
            #expect(answer.headers["location"] == "/packed")
        }
    }

    /// URLSession's two limits: an exchange that keeps receiving may run past the idle
    /// timeout (up to the whole timeout); one that receives nothing fails at the idle timeout.
    @Test func urlSessionsIdleTimeoutCutsOnlySilentExchanges() async throws {
        try await Self.withServer { base, _ in
            // Far apart (15 s and 45 s): a loaded machine adds seconds to each, and can hold the
            // server's drip back for seconds (CI runs saw idle timeouts of 2 s and 5 s cut it).
            let transport = try URLSessionTransport(baseURL: base, timeout: 45, idleTimeout: 15)
            var started = ContinuousClock.now
            await #expect(throws: SyncError.self) { try await transport.send(TransportRequest(method: "GET", path: "/drip")) }
            let dripping = ContinuousClock.now - started
            #expect(dripping > .milliseconds(44_500), "bytes kept coming: the whole timeout (45 s) ended it, after \(dripping)")
            started = ContinuousClock.now
            await #expect(throws: SyncError.self) { try await transport.send(TransportRequest(method: "GET", path: "/stall/50000")) }
            let silent = ContinuousClock.now - started
            #expect(silent < .milliseconds(44_500), "nothing came: the idle timeout (15 s) ended it, after \(silent)")
        }
    }

    @Test(arguments: TransportKind.allCases)
    func cancellingTheCallerAbortsTheExchange(kind: TransportKind) async throws {
        try await Self.withServer { base, seen in
            let transport = try kind.make(base)
            // Waiting for an answer that does not come for 20 s (a live sync's waiting pull).
            // libcurl looks at the flag about once a second while nothing moves; a loaded
            // machine adds seconds to that, so the bound is 12 s (the answer would come after
            // 19.7; the drip below ends after 60).
            let waiting = Task { try await transport.send(TransportRequest(method: "GET", path: "/stall/20000")) }
            try await Task.sleep(for: .milliseconds(300))
            var cancelled = ContinuousClock.now
            waiting.cancel()
            await #expect(throws: CancellationError.self) { try await waiting.value }
            #expect(ContinuousClock.now - cancelled < .seconds(12), "the caller is not kept waiting for the answer")
            // Receiving an answer: the connection goes with it, and the server sees so.
            let receiving = Task { try await transport.send(TransportRequest(method: "GET", path: "/drip")) }
            try await Task.sleep(for: .milliseconds(300))
            cancelled = ContinuousClock.now
            receiving.cancel()
            await #expect(throws: CancellationError.self) { try await receiving.value }
            #expect(ContinuousClock.now - cancelled < .seconds(12))
            while seen.closed.withLockedValue({ $0 }) == 0, ContinuousClock.now - cancelled < .seconds(60) {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(seen.closed.withLockedValue { $0 } == 1, "the server's writes failed: the client closed the connection")
            // The transport works after a cancellation.
            let after = try await transport.send(TransportRequest(method: "GET", path: "/stall/0"))
            #expect(after.status == 200 && after.body == Data("late".utf8))
            // A task cancelled before it sends sends nothing.
            let early = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await transport.send(TransportRequest(method: "POST", path: "/echo/early", body: Data("x".utf8)))
            }
            await #expect(throws: CancellationError.self) { try await early.value }
            #expect(seen.requests.withLockedValue { $0["early"] } == nil)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aClosedPortIsUnreachableAndABadURLIsMisconfigured(kind: TransportKind) async throws {
        let nowhere = try kind.make("http://127.0.0.1:1", timeout: 5)
        await #expect { try await nowhere.send(TransportRequest(method: "GET", path: "/health")) } throws: { error in
            (error as? SyncError)?.code == .unreachable && (error as? SyncError)?.message.contains("127.0.0.1:1") == true
        }
        for bad in ["ftp://example.com", "not a url", "http://"] {
            #expect(throws: SyncError.self, "\(bad)") { try kind.make(bad) }
        }
    }
}

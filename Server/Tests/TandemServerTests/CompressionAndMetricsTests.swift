import Foundation
import HTTPTypes
import Testing
import TandemGzip
@testable import TandemServer
import TandemWire

@Suite("gzip bodies and /metrics")
struct CompressionAndMetricsTests {
    static let key = HTTPField.Name("Idempotency-Key")!

    func pushBody(_ dataset: String, count: Int) throws -> Data {
        try JSONEncoder().encode(PushRequest(schemaVersion: 1, changes: (0..<count).map { ServerHarness.insert(dataset, $0) }))
    }

    @Test func gzipRoundTripsAndReadsConcatenatedMembers() throws {
        let text = Array(String(repeating: "tandem sync ", count: 5000).utf8)
        let packed = try Gzip.compress(text)
        #expect(packed.count < text.count / 10)
        #expect(try Gzip.decompress(packed, limit: text.count) == text)
        #expect(try Gzip.decompress(packed + (try Gzip.compress(Array("!".utf8))), limit: text.count + 1) == text + Array("!".utf8))
        #expect(try Gzip.decompress(try Gzip.compress([UInt8]()), limit: 0) == [])
    }

    @Test func gzipRefusesCorruptTruncatedAndOversizedInput() throws {
        let packed = try Gzip.compress(Array(repeating: UInt8(ascii: "a"), count: 100_000))
        #expect(throws: GzipError.self) { try Gzip.decompress(Array("not gzip".utf8), limit: 1000) }
        #expect(throws: GzipError.self) { try Gzip.decompress([UInt8](), limit: 1000) }
        #expect { try Gzip.decompress(packed.dropLast(12), limit: 200_000) } throws: { ($0 as? GzipError)?.code == .corrupt }
        #expect { try Gzip.decompress(packed, limit: 99_999) } throws: { ($0 as? GzipError)?.code == .tooLarge }
    }

    @Test(arguments: StorageKind.allCases)
    func gzipPushIsAppliedLikePlainJSON(_ kind: StorageKind) async throws {
        let harness = try await ServerHarness.make(kind)
        try await harness.run { client in
            try await client.setUp("d", token: harness.ann)
            let packed = Data(try Gzip.compress(try pushBody("d", count: 20)))
            let reply = try await client.send(
                .post, "/v1/datasets/d/push", token: harness.ann, body: packed,
                headers: [Self.key: "g1", .contentEncoding: "gzip"])
            #expect(reply.status == .ok)
            #expect(try reply.decode(PushResponse.self).outcomes.allSatisfy { $0.position != nil })
            #expect(try await client.pullAll("d", token: harness.ann, limit: 100).count == 20)
        }
    }

    @Test(arguments: StorageKind.allCases)
    func badlyEncodedBodiesGetA4xxAndChangeNothing(_ kind: StorageKind) async throws {
        let harness = try await ServerHarness.make(kind) { $0.maxBodyBytes = 64 << 10 }
        try await harness.run { client in
            try await client.setUp("d", token: harness.ann)
            let body = try pushBody("d", count: 5)
            let corrupt = try await client.send(
                .post, "/v1/datasets/d/push", token: harness.ann, body: body,
                headers: [Self.key: "c1", .contentEncoding: "gzip"])
            #expect(corrupt.status == .badRequest)
            #expect(corrupt.errorCode == "invalid_encoding")
            // 100 KB of spaces inside valid JSON packs to a few hundred bytes: the inflated size is what counts.
            var bomb = Array("{\"schemaVersion\":1,\"changes\":[]".utf8)
            bomb += Array(repeating: UInt8(ascii: " "), count: 100_000) + Array("}".utf8)
            let packedBomb = Data(try Gzip.compress(bomb))
            #expect(packedBomb.count < 1000)
            let large = try await client.send(
                .post, "/v1/datasets/d/push", token: harness.ann, body: packedBomb,
                headers: [Self.key: "c2", .contentEncoding: "gzip"])
            #expect(large.status == .contentTooLarge)
            #expect(large.errorCode == "body_too_large")
            let unknown = try await client.send(
                .post, "/v1/datasets/d/push", token: harness.ann, body: body,
                headers: [Self.key: "c3", .contentEncoding: "br"])
            #expect(unknown.status == .unsupportedMediaType)
            #expect(unknown.errorCode == "unsupported_encoding")
            #expect(try await client.pullAll("d", token: harness.ann, limit: 100).isEmpty)
        }
    }

    @Test func largeAnswersAreGzippedOnlyForClientsThatAskForIt() async throws {
        let harness = try await ServerHarness.make(.memory)
        try await harness.run { client in
            try await client.setUp("d", token: harness.ann)
            _ = try await client.send(
                .post, "/v1/datasets/d/push", token: harness.ann, body: try pushBody("d", count: 50),
                headers: [Self.key: "k"])
            let plain = try await client.send(.get, "/v1/datasets/d/pull", token: harness.ann)
            #expect(plain.headers[.contentEncoding] == nil)
            let page = try plain.decode(PullResponse.self)
            #expect(page.changes.count == 50)

            let zipped = try await client.send(
                .get, "/v1/datasets/d/pull", token: harness.ann,
                headers: [.acceptEncoding: "br;q=1.0, gzip;q=0.8"])
            #expect(zipped.headers[.contentEncoding] == "gzip")
            #expect(zipped.body.count < plain.body.count / 3)
            let inflated = Data(try Gzip.decompress(zipped.body, limit: 1 << 20))
            #expect(try JSONDecoder().decode(PullResponse.self, from: inflated).changes == page.changes)

            let refused = try await client.send(.get, "/v1/datasets/d/pull", token: harness.ann, headers: [.acceptEncoding: "gzip;q=0"])
            #expect(refused.headers[.contentEncoding] == nil)
            let small = try await client.send(.get, "/health", token: nil, headers: [.acceptEncoding: "gzip"])
            #expect(small.headers[.contentEncoding] == nil)
        }
    }

    /// The value of a Prometheus sample line `name{labels} value` (or `name value`).
    static func sample(_ page: String, _ name: String) -> Double? {
        page.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.split(separator: " ").last!) }
    }

    @Test func metricsCountPushesAppliedChangesLostValuesReplaysAndErrors() async throws {
        let harness = try await ServerHarness.make(.sqlite)
        try await harness.run { client in
            try await client.setUp("d", token: harness.ann)
            _ = try await client.push("d", token: harness.ann, key: "a", PushRequest(schemaVersion: 1, changes: (0..<7).map { ServerHarness.insert("d", $0) }))
            _ = try await client.push("d", token: harness.ann, key: "a", PushRequest(schemaVersion: 1, changes: (0..<7).map { ServerHarness.insert("d", $0) }))
            // An older title for record 0 loses (its other values are the ones held: no loss).
            let older = ServerHarness.insert("d", 0, title: "old", at: ServerHarness.stamp(1_700_000_000_000))
            _ = try await client.push("d", token: harness.ann, key: "b", PushRequest(schemaVersion: 1, changes: [older]))
            _ = try await client.send(.get, "/v1/datasets/d/pull?limit=3", token: harness.ann)
            _ = try await client.send(.get, "/v1/datasets/nope/pull", token: harness.ann)

            let reply = try await client.send(.get, "/metrics", token: nil)
            #expect(reply.status == .ok)
            #expect(reply.headers[.contentType]?.hasPrefix("text/plain") == true)
            let page = String(decoding: reply.body, as: UTF8.self)
            #expect(Self.sample(page, "tandem_push_requests_total") == 3)
            #expect(Self.sample(page, "tandem_push_replays_total") == 1)
            #expect(Self.sample(page, "tandem_changes_applied_total") == 7)
            #expect(Self.sample(page, "tandem_values_lost_total") == 1)
            #expect(Self.sample(page, "tandem_changes_pulled_total") == 3)
            #expect(Self.sample(page, "tandem_schema_versions_registered_total") == 1)
            #expect(page.contains(#"tandem_http_responses_total{status="404",code="not_found"} 1"#))
            #expect(page.contains("tandem_push_duration_seconds_bucket"))
        }
    }
}

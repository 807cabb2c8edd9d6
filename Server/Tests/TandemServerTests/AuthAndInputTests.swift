import Foundation
import GRDB
import Hummingbird
import HTTPTypes
import Testing
import TandemSchema
@testable import TandemServer
import TandemWire

@Suite("Authentication, isolation and bad input")
struct AuthAndInputTests {
    /// Every protocol endpoint, with a body where it takes one.
    static func endpoints(_ dataset: String) throws -> [(HTTPRequest.Method, String, Data?)] {
        let push = try JSONEncoder().encode(PushRequest(schemaVersion: 1, changes: [ServerHarness.insert(dataset, 1)]))
        return [
            (.get, "/v1/capabilities", nil),
            (.get, "/v1/datasets", nil),
            (.put, "/v1/datasets/\(dataset)", nil),
            (.get, "/v1/datasets/\(dataset)/schema", nil),
            (.put, "/v1/datasets/\(dataset)/schema", try ServerHarness.schema.canonicalJSON()),
            (.post, "/v1/datasets/\(dataset)/push", push),
            (.get, "/v1/datasets/\(dataset)/pull", nil),
        ]
    }

    @Test func missingMalformedUnknownAndRevokedTokensGet401OnEveryEndpoint() async throws {
        let harness = try await ServerHarness.make(.sqlite)
        let revoked = try await TokenIssuer.issue(for: try #require(await harness.storage.user(named: "ann")), in: harness.storage)
        #expect(try await harness.storage.revokeToken(id: String(revoked.dropFirst(4).prefix(12))))
        let unknown = "tdm_" + String(repeating: "a", count: 12) + "_" + String(repeating: "b", count: 64)
        let wrongSecret = String(harness.ann.prefix(17)) + String(repeating: "0", count: 64)
        try await harness.run { client in
            for (method, path, body) in try Self.endpoints("todos") {
                for token: String? in [nil, "not-a-token", "tdm_short_x", unknown, wrongSecret, revoked] {
                    let reply = try await client.send(
                        method, path, token: token, body: body,
                        headers: [HTTPField.Name("Idempotency-Key")!: "k"])
                    #expect(reply.status == .unauthorized, "\(method) \(path) with \(token ?? "no token")")
                    #expect(reply.errorCode == "unauthorized")
                }
            }
        }
    }

    /// Bob can reach none of Ann's data: not by path, not by record URI, not by cursor.
    @Test(arguments: StorageKind.allCases)
    func anotherUsersDatasetIsInvisibleWhereverItsNameCanHide(_ kind: StorageKind) async throws {
        let harness = try await ServerHarness.make(kind)
        try await harness.run { client in
            try await client.setUp("alpha", token: harness.ann)
            _ = try await client.push("alpha", token: harness.ann, key: "a", PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("alpha", 1)]))
            let annCursor = try await client.send(.get, "/v1/datasets/alpha/pull", token: harness.ann).decode(PullResponse.self).nextCursor
            // Path: every endpoint but the create answers 404 for Bob.
            for (method, path, body) in try Self.endpoints("alpha") where path.hasPrefix("/v1/datasets/") && !(method == .put && path == "/v1/datasets/alpha") {
                let reply = try await client.send(method, path, token: harness.bob, body: body, headers: [HTTPField.Name("Idempotency-Key")!: "b"])
                #expect(reply.status == .notFound, "\(method) \(path)")
            }
            #expect(try await client.send(.get, "/v1/datasets", token: harness.bob).decode(DatasetList.self).datasets.isEmpty)
            // Bob's own "alpha" is another dataset: empty, and Ann's cursor does not open hers.
            try await client.setUp("alpha", token: harness.bob)
            #expect(try await client.pullAll("alpha", token: harness.bob, limit: 10).isEmpty)
            let byCursor = try await client.send(.get, "/v1/datasets/alpha/pull?after=\(annCursor)", token: harness.bob)
            #expect(byCursor.status == .conflict && byCursor.errorCode == "cursor_other_dataset")
            // Batch items: a record URI of another dataset is refused.
            try await client.setUp("beta", token: harness.bob)
            let foreign = try await client.push("beta", token: harness.bob, key: "x", PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("alpha", 9)]))
            #expect(foreign.status == .forbidden && foreign.errorCode == "record_in_other_dataset")
            // Ann's data is unchanged.
            #expect(try await client.pullAll("alpha", token: harness.ann, limit: 10).count == 1)
        }
    }

    /// A push carries its store's cursor: one of another dataset (a sync run with the wrong
    /// dataset) is refused before anything is stored, where before the store's edits were
    /// taken there, counted as pushed, and never reached its own dataset. A cursor of a
    /// dataset of the name deleted since is taken (the client resyncs at its pull).
    @Test(arguments: StorageKind.allCases)
    func aPushCarryingAnotherDatasetsCursorIsRefusedAndStoresNothing(_ kind: StorageKind) async throws {
        let harness = try await ServerHarness.make(kind)
        try await harness.run { client in
            func push(_ dataset: String, _ key: String, cursor: String?, _ n: Int) async throws -> Reply {
                var headers: HTTPFields = [HTTPField.Name("Idempotency-Key")!: key]
                if let cursor { headers[HTTPField.Name("Tandem-Cursor")!] = cursor }
                return try await client.json(
                    .post, "/v1/datasets/\(dataset)/push", token: harness.ann, PushRequest(schemaVersion: 1, changes: [ServerHarness.insert(dataset, n)]),
                    headers: headers)
            }
            try await client.setUp("alpha", token: harness.ann)
            #expect(try await push("alpha", "a1", cursor: nil, 1).status == .ok)
            let alphaCursor = try await client.pull("alpha", token: harness.ann, limit: 10).nextCursor
            try await client.setUp("beta", token: harness.ann)
            let refused = try await push("beta", "b1", cursor: alphaCursor, 2)
            #expect(refused.status == .conflict && refused.errorCode == "cursor_other_dataset", "\(refused)")
            #expect(String(decoding: refused.body, as: UTF8.self).contains("tandem resync"), "the way out is named")
            #expect(try await client.pullAll("beta", token: harness.ann, limit: 10).isEmpty, "nothing stored")
            let garbled = try await push("beta", "b2", cursor: "nonsense", 2)
            #expect(garbled.status == .badRequest && garbled.errorCode == "invalid_cursor")
            // Its own dataset's cursor, and none (a store's first push), are taken.
            #expect(try await push("alpha", "a2", cursor: alphaCursor, 3).status == .ok)
            #expect(try await push("beta", "b3", cursor: "", 4).status == .ok)
            #expect(try await client.pullAll("alpha", token: harness.ann, limit: 10).count == 2)
            // Deleted and made again: the old cursor is of this owner's dataset of the name.
            #expect(try await client.send(.delete, "/v1/datasets/alpha", token: harness.ann).status == .noContent)
            try await client.setUp("alpha", token: harness.ann)
            #expect(try await push("alpha", "a3", cursor: alphaCursor, 5).status == .ok)
        }
    }

    @Test(arguments: StorageKind.allCases)
    func badInputGetsTheDocumented4xxAndChangesNothing(_ kind: StorageKind) async throws {
        let harness = try await ServerHarness.make(kind) {
            $0.maxBodyBytes = 4096; $0.maxChangesPerPush = 3
        }
        try await harness.run { client in
            try await client.setUp("todos", token: harness.ann)
            let key: HTTPFields = [HTTPField.Name("Idempotency-Key")!: "k"]
            func push(_ text: String) async throws -> Reply {
                try await client.send(.post, "/v1/datasets/todos/push", token: harness.ann, body: Data(text.utf8), headers: key)
            }
            func change(_ values: String, stamps: String? = nil) -> String {
                let stamp = ServerHarness.stamp()
                return
                    #"{"schemaVersion": 1, "changes": [{"record": "\#(ServerHarness.uri("todos", 1))", "entity": "Todo", "kind": "insert", "values": \#(values), "stamps": \#(stamps ?? #"{"title": "\#(stamp)"}"#)}]}"#
            }
            let cases: [(String, HTTPResponse.Status, String)] = [
                ("{not json", .badRequest, "invalid_json"),
                (#"{"schemaVersion": "one", "changes": []}"#, .badRequest, "invalid_json"),
                (#"{"schemaVersion": 1, "changes": [], "outcomes": "some"}"#, .badRequest, "invalid_json"),
                (#"{"schemaVersion": 1, "changes": [], "outcomes": true}"#, .badRequest, "invalid_json"),
                (change(#"{"title": 12}"#), .unprocessableContent, "invalid_value"),
                (change(#"{"title": 1e400}"#), .badRequest, "invalid_json"),
                (change(#"{"rank": 99999999999999999999999}"#, stamps: #"{"rank": "\#(ServerHarness.stamp())"}"#), .unprocessableContent, "invalid_value"),
                (change(#"{"title": "x"}"#, stamps: #"{"title": "yesterday"}"#), .unprocessableContent, "invalid_stamp"),
                (change(#"{"title": "x"}"#, stamps: "{}"), .unprocessableContent, "invalid_stamp"),
                // Compact stamps name only the change's values besides "*"; without "*", every value has one.
                (change(#"{"title": "x"}"#, stamps: #"{"*": "\#(ServerHarness.stamp())", "rank": "\#(ServerHarness.stamp())"}"#), .unprocessableContent, "invalid_stamp"),
                (change(#"{"title": "x", "rank": 1}"#), .unprocessableContent, "invalid_stamp"),
                (change(#"{"title": "x"}"#, stamps: #"{"*": "later"}"#), .unprocessableContent, "invalid_stamp"),
                (change(#"{"title": null}"#), .unprocessableContent, "invalid_value"),
                (
                    #"{"schemaVersion": 1, "changes": [{"record": "tandem://todos/Nope/00000000-0000-0000-0000-000000000001", "entity": "Nope", "kind": "insert", "values": {}, "stamps": {}}]}"#,
                    .unprocessableContent, "unknown_entity"
                ),
                (#"{"schemaVersion": 1, "changes": [{"record": "http://x", "entity": "Todo", "kind": "insert", "values": {}, "stamps": {}}]}"#, .unprocessableContent, "invalid_record"),
                (#"{"schemaVersion": 1, "changes": [{"record": "x", "entity": "Todo", "kind": "upsert", "values": {}, "stamps": {}}]}"#, .badRequest, "invalid_json"),
                (String(repeating: " ", count: 5000), .contentTooLarge, "body_too_large"),
            ]
            for (body, status, code) in cases {
                let reply = try await push(body)
                #expect(reply.status == status && reply.errorCode == code, "\(body.prefix(120)) → \(reply.status) \(String(decoding: reply.body, as: UTF8.self))")
            }
            var invalidUTF8 = Data(#"{"schemaVersion": 1, "changes": [{"record": ""#.utf8)
            invalidUTF8.append(contentsOf: [0xC3, 0x28])
            invalidUTF8.append(contentsOf: Data(#"", "entity": "Todo", "kind": "insert", "values": {}, "stamps": {}}]}"#.utf8))
            let utf8 = try await client.send(.post, "/v1/datasets/todos/push", token: harness.ann, body: invalidUTF8, headers: key)
            #expect(utf8.status == .badRequest && utf8.errorCode == "invalid_json")
            let tooMany = try await client.push(
                "todos", token: harness.ann, key: "many",
                PushRequest(schemaVersion: 1, changes: (1...4).map { ServerHarness.insert("todos", $0) }))
            #expect(tooMany.status == .contentTooLarge && tooMany.errorCode == "batch_too_large")
            let noKey = try await client.send(.post, "/v1/datasets/todos/push", token: harness.ann, body: Data(change(#"{"title": "x"}"#).utf8))
            #expect(noKey.status == .badRequest && noKey.errorCode == "missing_idempotency_key")
            let badCursor = try await client.send(.get, "/v1/datasets/todos/pull?after=garbage", token: harness.ann)
            #expect(badCursor.status == .badRequest && badCursor.errorCode == "invalid_cursor")
            let badLimit = try await client.send(.get, "/v1/datasets/todos/pull?limit=-3", token: harness.ann)
            #expect(badLimit.status == .badRequest && badLimit.errorCode == "invalid_limit")
            let badName = try await client.send(.put, "/v1/datasets/bad%20name", token: harness.ann)
            #expect(badName.status == .badRequest && badName.errorCode == "invalid_dataset")
            let badSchema = try await client.send(.put, "/v1/datasets/todos/schema", token: harness.ann, body: Data(#"{"formatVersion": 1}"#.utf8))
            #expect(badSchema.status == .badRequest && badSchema.errorCode == "invalid_schema")
            #expect(try await client.pullAll("todos", token: harness.ann, limit: 10).isEmpty, "nothing was applied")
        }
    }

    @Test func aStampFarAheadOfTheServerClockIsRefusedWithTheServerTime() async throws {
        let now: Int64 = 1_800_000_000_000
        let harness = try await ServerHarness.make(.memory, now: { now })
        try await harness.run { client in
            try await client.setUp("todos", token: harness.ann)
            let dayAhead = ServerHarness.stamp(UInt64(now) + 86_400_000)
            let reply = try await client.push(
                "todos", token: harness.ann, key: "k",
                PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("todos", 1, at: dayAhead)]))
            #expect(reply.status == .unprocessableContent)
            let error = try reply.decode(WireErrorBody.self).error
            #expect(error.code == "clock_skew" && error.serverTime == now)
        }
    }

    @Test func aTokenOverItsRateGets429WithRetryAfter() async throws {
        // A rate so low that no slowness of the machine refills a token during the test.
        let harness = try await ServerHarness.make(.memory) {
            $0.requestsPerSecond = 0.01; $0.burst = 3
        }
        try await harness.run { client in
            var statuses: [HTTPResponse.Status] = []
            var retryAfter: String?
            for _ in 0..<5 {
                let reply = try await client.send(.get, "/v1/datasets", token: harness.ann)
                statuses.append(reply.status)
                if reply.status == .tooManyRequests { retryAfter = reply.headers[.retryAfter] }
            }
            #expect(statuses.prefix(3).allSatisfy { $0 == .ok })
            #expect(statuses.last == .tooManyRequests)
            #expect(retryAfter.flatMap { Int($0) }.map { $0 >= 1 && $0 <= 100 } == true, "Retry-After: \(retryAfter ?? "none")")
            #expect(try await client.send(.get, "/v1/datasets", token: harness.bob).status == .ok, "limits are per token")
        }
    }

    @Test func stampsWithoutValuesAndMixedCaseURIsAreHandled() async throws {
        let harness = try await ServerHarness.make(.sqlite)
        try await harness.run { client in
            try await client.setUp("todos", token: harness.ann)
            var extra = ServerHarness.insert("todos", 1)
            extra.stamps["ghost"] = ServerHarness.stamp()
            let reply = try await client.push("todos", token: harness.ann, key: "a", PushRequest(schemaVersion: 1, changes: [extra]))
            #expect(reply.status == .unprocessableContent && reply.errorCode == "invalid_stamp")
            var upper = ServerHarness.insert("todos", 2)
            upper.record = upper.record.uppercased().replacingOccurrences(of: "TANDEM://TODOS/TODO/", with: "tandem://todos/Todo/")
            _ = try await client.push("todos", token: harness.ann, key: "b", PushRequest(schemaVersion: 1, changes: [upper]))
            let later = WireChange(
                record: ServerHarness.uri("todos", 2), entity: "Todo", kind: .update, values: ["title": .text("x")],
                stamps: ["title": ServerHarness.stamp(1_800_000_000_001)])
            _ = try await client.push("todos", token: harness.ann, key: "c", PushRequest(schemaVersion: 1, changes: [later]))
            let records = Set(try await client.pullAll("todos", token: harness.ann, limit: 10).map(\.change.record))
            #expect(records == [ServerHarness.uri("todos", 2)], "one record, in canonical form")
        }
    }

    @Test func aSchemaWithRepeatedNamesIsRefusedBeforeItCanHurt() async throws {
        let harness = try await ServerHarness.make(.memory)
        try await harness.run { client in
            _ = try await client.send(.put, "/v1/datasets/todos", token: harness.ann)
            var repeated = ServerHarness.schema
            repeated.entities[0].attributes.append(Schema.Attribute(name: "title", type: .scalar(.int)))
            var primaryKey = ServerHarness.schema
            primaryKey.entities[0].attributes.append(Schema.Attribute(name: "#id", type: .scalar(.string)))
            var twice = ServerHarness.schema
            twice.entities.append(twice.entities[0])
            // Entity identities: two entities stored as one, a first name that is another's
            // name, a first name a URI or a table cannot hold, a relationship to nothing.
            func renamed(_ originalName: String, extra: Schema.Entity? = nil) -> Schema {
                var schema = ServerHarness.schema
                schema.entities[0].originalName = originalName
                if let extra { schema.entities.append(extra) }
                return schema
            }
            let other = Schema.Entity(name: "Other", attributes: [Schema.Attribute(name: "name", type: .scalar(.string))])
            var sameFirstName = other
            sameFirstName.originalName = "Task"
            var dangling = ServerHarness.schema
            dangling.entities[0].relationships.append(Schema.Relationship(name: "owner", destination: "Nobody", cardinality: .toOne))
            let identities = [
                renamed("Task", extra: sameFirstName), renamed("Other", extra: other), renamed("Ta sk"), renamed("Ta/sk"), renamed(""),
                renamed("tandem_x"), renamed("sqlite_master"), dangling,
            ]
            for schema in [repeated, primaryKey, twice] + identities {
                let reply = try await client.send(.put, "/v1/datasets/todos/schema", token: harness.ann, body: try schema.canonicalJSON())
                #expect(reply.status == .unprocessableContent && reply.errorCode == "invalid_schema", "\(String(decoding: reply.body, as: UTF8.self))")
            }
        }
    }

    @Test func aStorageFailureIsAJSON503NotACrash() async throws {
        let storage = FailingStorage(base: MemoryServerStorage())
        let ann = try await TokenIssuer.issue(for: try await storage.addUser(name: "ann", now: 0), in: storage)
        let harness = ServerHarness(storage: storage, dependencies: ServerDependencies(storage: storage), ann: ann, bob: ann)
        try await harness.run { client in
            let reply = try await client.send(.get, "/v1/datasets", token: harness.ann)
            #expect(reply.status == .serviceUnavailable && reply.errorCode == "busy")
            #expect(reply.headers[.retryAfter] == "1")
        }
    }

    @Test func healthChecksTheDatabase() async throws {
        let harness = try await ServerHarness.make(.sqlite)
        try await harness.run { client in
            let reply = try await client.send(.get, "/health", token: nil)
            #expect(reply.status == .ok)
        }
    }
}

/// Memory storage whose dataset listing fails as a busy SQLite database would.
struct FailingStorage: ForwardingStorage {
    let base: MemoryServerStorage
    func datasets(reachableBy user: Int64) async throws -> [ReachableDataset] {
        throw DatabaseError(resultCode: .SQLITE_BUSY, message: "database is locked")
    }
}

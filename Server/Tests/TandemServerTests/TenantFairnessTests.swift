#if canImport(Glibc)
    import Glibc  // sockets, for a pipelined request
#endif
import Foundation
import GRDB
import Hummingbird
import HummingbirdTesting
import Logging
import NIOConcurrencyHelpers
import Testing
import TandemSchema
@testable import TandemServer
import TandemWire

/// What one tenant's request may hold: schema checks outside the write transaction and within
/// size limits, pull pages bounded in bytes, a schema cache that stays small and is not
/// re-read by every push naming a version that does not exist.
@Suite("One tenant cannot stall the others")
struct TenantFairnessTests {
    static func entity(_ name: String, attributes: [String]) -> Schema.Entity {
        Schema.Entity(name: name, attributes: attributes.map { Schema.Attribute(name: $0, type: .scalar(.string), isOptional: true) })
    }

    /// A version registered by someone else between the check and the commit is checked
    /// against too: the registration commits only on the history it was checked against.
    @Test func aVersionRegisteredDuringTheCheckIsCheckedAgainstBeforeCommitting() async throws {
        let base = MemoryServerStorage()
        let v1 = Schema(entities: [Self.entity("Note", attributes: ["title"])])
        // Registered "meanwhile": adds `body`. The candidate adds `rank` to v1 but lacks
        // `body`: compatible with v1, breaking with the version that came meanwhile.
        let meanwhile = Schema(entities: [Self.entity("Note", attributes: ["title", "body"])])
        let candidate = Schema(entities: [Self.entity("Note", attributes: ["title", "rank"])])
        let storage = InterleavingStorage(base: base, meanwhile: String(decoding: try meanwhile.canonicalJSON(), as: UTF8.self))
        let token = try await TokenIssuer.issue(for: try await base.addUser(name: "ann", now: 0), in: base)
        let app = Application(router: buildRouter(ServerDependencies(storage: storage)), logger: Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() }))
        try await app.test(.router) { client in
            let auth: HTTPFields = [.authorization: "Bearer \(token)"]
            _ = try await client.execute(uri: "/v1/datasets/notes", method: .put, headers: auth)
            let first = try await client.execute(uri: "/v1/datasets/notes/schema", method: .put, headers: auth, body: ByteBuffer(bytes: try v1.canonicalJSON()))
            #expect(first.status == .created)
            storage.armed.withLockedValue { $0 = true }
            let refused = try await client.execute(
                uri: "/v1/datasets/notes/schema", method: .put, headers: auth, body: ByteBuffer(bytes: try candidate.canonicalJSON()))
            let text = String(buffer: refused.body)
            #expect(refused.status == .conflict && text.contains("schema_incompatible") && text.contains("version 2"), "\(refused.status) \(text)")
            let id = try #require(await base.datasetID(owner: 1, name: "notes"))
            #expect(await base.schemaHistory(dataset: id).count == 2)
        }
    }

    @Test(arguments: [
        ("entities", "--max-schema-entities"), ("members", "--max-schema-members"), ("bytes", "--max-schema-bytes"),
    ])
    func aSchemaPastALimitIsRefusedNamingIt(limit: String, option: String) async throws {
        let harness = try await ServerHarness.make(.memory) { configuration in
            switch limit {
            case "entities": configuration.maxSchemaEntities = 2
            case "members": configuration.maxSchemaMembers = 5
            default: configuration.maxSchemaBytes = 200
            }
        }
        let schema = Schema(entities: (1...3).map { Self.entity("E\($0)", attributes: ["a", "b"]) })
        try await harness.run { client in
            _ = try await client.send(.put, "/v1/datasets/big", token: harness.ann)
            let reply = try await client.send(.put, "/v1/datasets/big/schema", token: harness.ann, body: try schema.canonicalJSON())
            let message = try reply.decode(WireErrorBody.self).error.message
            #expect(reply.status == .contentTooLarge && reply.errorCode == "schema_too_large" && message.contains(option), "\(reply.status) \(message)")
            #expect(try await client.send(.get, "/v1/datasets/big/schema", token: harness.ann).decode(SchemaHistory.self).versions.isEmpty)
        }
    }

    @Test func aSchemaWithAnEmptyAttributeNameIsRefused() async throws {
        let harness = try await ServerHarness.make(.memory)
        try await harness.run { client in
            _ = try await client.send(.put, "/v1/datasets/d", token: harness.ann)
            let reply = try await client.send(
                .put, "/v1/datasets/d/schema", token: harness.ann, body: try Schema(entities: [Self.entity("Note", attributes: [""])]).canonicalJSON())
            #expect(reply.status == .unprocessableContent && reply.errorCode == "invalid_schema")
        }
    }

    /// Pages end once their entries reach the byte limit; one larger entry goes out alone;
    /// following the cursors gives every entry once, in order.
    @Test(arguments: StorageKind.allCases)
    func pullPagesAreBoundedInBytes(_ kind: StorageKind) async throws {
        let harness = try await ServerHarness.make(kind) { $0.maxPageBytes = 2_000 }
        try await harness.run { client in
            try await client.setUp("todos", token: harness.ann)
            let titles = [600, 600, 600, 5_000, 600].map { String(repeating: "x", count: $0) }
            let changes = titles.enumerated().map { ServerHarness.insert("todos", $0.offset + 1, title: $0.element) }
            #expect(try await client.push("todos", token: harness.ann, key: "k", PushRequest(schemaVersion: 1, changes: changes)).status == .ok)
            let pages = try await client.pullPages("todos", token: harness.ann, limit: 100)
            func size(_ entry: LogEntry) -> Int {
                var json = WireJSON()
                json.append(entry)
                return json.bytes.count + 1
            }
            #expect(pages.joined().map(\.change.record) == (1...5).map { ServerHarness.uri("todos", $0) })
            // A page goes on only while under the limit, and ends there (not at `limit`) but
            // for the last; the 5 000-byte entry goes out though it alone is over it.
            for (index, page) in pages.enumerated() {
                #expect(page.dropLast().map(size).reduce(0, +) < 2_000, "page \(index): \(page.map(size))")
                if index < pages.count - 1 { #expect(page.map(size).reduce(0, +) >= 2_000, "page \(index): \(page.map(size))") }
            }
            #expect(pages.count >= 3 && pages.contains { $0.contains { size($0) > 5_000 } })
        }
    }

    @Test(arguments: StorageKind.allCases)
    func datasetsPastTheUsersQuotaAreRefused(_ kind: StorageKind) async throws {
        let harness = try await ServerHarness.make(kind) { $0.maxDatasetsPerUser = 2 }
        try await harness.run { client in
            #expect(try await client.send(.put, "/v1/datasets/one", token: harness.ann).status == .created)
            #expect(try await client.send(.put, "/v1/datasets/two", token: harness.ann).status == .created)
            let third = try await client.send(.put, "/v1/datasets/three", token: harness.ann)
            #expect(third.status == .forbidden && third.errorCode == "quota_exceeded")
            #expect(try third.decode(WireErrorBody.self).error.message.contains("--max-datasets-per-user"))
            // An existing one is still answered; another user has a quota of their own.
            #expect(try await client.send(.put, "/v1/datasets/one", token: harness.ann).status == .ok)
            #expect(try await client.send(.put, "/v1/datasets/three", token: harness.bob).status == .created)
        }
    }

    @Test func schemaVersionsPastTheQuotaAreRefused() async throws {
        let harness = try await ServerHarness.make(.memory) { $0.maxSchemaVersions = 2 }
        try await harness.run { client in
            _ = try await client.send(.put, "/v1/datasets/d", token: harness.ann)
            for (index, attributes) in [["title"], ["title", "b"], ["title", "b", "c"]].enumerated() {
                let reply = try await client.send(
                    .put, "/v1/datasets/d/schema", token: harness.ann, body: try Schema(entities: [Self.entity("Note", attributes: attributes)]).canonicalJSON())
                if index < 2 {
                    #expect(reply.status == .created)
                } else {
                    #expect(reply.status == .forbidden && reply.errorCode == "quota_exceeded")
                }
            }
        }
    }

    /// The operator's limits for one user hold from that user's next request, both ways,
    /// and leave other users on the server's default.
    @Test(arguments: StorageKind.allCases)
    func aUsersOwnQuotaReplacesTheServersDefault(_ kind: StorageKind) async throws {
        let harness = try await ServerHarness.make(kind) { $0.maxDatasetsPerUser = 1 }
        let ann = try #require(try await harness.storage.user(named: "ann"))
        try await harness.storage.setQuota(user: ann.id, UserQuota(datasets: 3, schemaVersions: 1))
        #expect(try await harness.storage.user(named: "ann")?.quota == UserQuota(datasets: 3, schemaVersions: 1))
        try await harness.run { client in
            for name in ["a", "b", "c"] {
                #expect(try await client.send(.put, "/v1/datasets/\(name)", token: harness.ann).status == .created)
            }
            let fourth = try await client.send(.put, "/v1/datasets/d", token: harness.ann)
            #expect(fourth.status == .forbidden && fourth.errorCode == "quota_exceeded")
            #expect(try fourth.decode(WireErrorBody.self).error.message.contains("users quota NAME --datasets"))
            #expect(try await client.send(.put, "/v1/datasets/a", token: harness.bob).status == .created)
            #expect(try await client.send(.put, "/v1/datasets/b", token: harness.bob).errorCode == "quota_exceeded")
            // One schema version for ann's datasets: a second is refused, until the override goes.
            let v1 = try Schema(entities: [Self.entity("Note", attributes: ["title"])]).canonicalJSON()
            let v2 = try Schema(entities: [Self.entity("Note", attributes: ["title", "body"])]).canonicalJSON()
            #expect(try await client.send(.put, "/v1/datasets/a/schema", token: harness.ann, body: v1).status == .created)
            #expect(try await client.send(.put, "/v1/datasets/a/schema", token: harness.ann, body: v2).errorCode == "quota_exceeded")
            try await harness.storage.setQuota(user: ann.id, UserQuota(datasets: 3))
            #expect(try await client.send(.put, "/v1/datasets/a/schema", token: harness.ann, body: v2).status == .created)
        }
    }

    /// Pushes racing past the byte quota: checked in each push's transaction, so once one
    /// has taken the user past it the others are refused (none slips through on a check made
    /// before the first committed); a retry of the one taken is answered as stored.
    @Test(arguments: StorageKind.allCases)
    func pushesRacingPastTheByteQuotaAreTakenOneByOne(_ kind: StorageKind) async throws {
        let harness = try await ServerHarness.make(kind) { $0.maxBytesPerUser = 1 }
        try await harness.run { client in
            try await client.setUp("todos", token: harness.ann)
            let replies = try await withThrowingTaskGroup(of: (Int, Reply).self) { group in
                for n in 0..<10 {
                    group.addTask {
                        let push = PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("todos", n + 1)])
                        return (n, try await client.push("todos", token: harness.ann, key: "k\(n)", push))
                    }
                }
                return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
            }
            // The schema registered first counts: every push sees the user at or past 1 byte.
            #expect(replies.values.allSatisfy { $0.status == .forbidden && $0.errorCode == "quota_exceeded" })
            #expect(try await client.pullAll("todos", token: harness.ann, limit: 100).isEmpty)
        }
        let roomy = try await ServerHarness.make(kind) { $0.maxBytesPerUser = 2_000 }
        try await roomy.run { client in
            try await client.setUp("todos", token: roomy.ann)
            let replies = try await withThrowingTaskGroup(of: (Int, Reply).self) { group in
                for n in 0..<10 {
                    group.addTask {
                        let changes = (0..<5).map { ServerHarness.insert("todos", n * 5 + $0 + 1) }
                        return (n, try await client.push("todos", token: roomy.ann, key: "k\(n)", PushRequest(schemaVersion: 1, changes: changes)))
                    }
                }
                return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
            }
            let taken = replies.filter { $0.value.status == .ok }.map(\.key)
            #expect(!taken.isEmpty && taken.count < 10, "\(replies.mapValues(\.status))")
            #expect(try await client.pullAll("todos", token: roomy.ann, limit: 100).count == taken.count * 5)
            // A retry of a push that was taken replays its answer, over the quota or not.
            let retry = try await client.push(
                "todos", token: roomy.ann, key: "k\(taken[0])",
                PushRequest(schemaVersion: 1, changes: (0..<5).map { ServerHarness.insert("todos", taken[0] * 5 + $0 + 1) }))
            #expect(retry.status == .ok)
        }
    }

    /// Lost values and schema versions count in the stored bytes, not the log alone.
    @Test(arguments: StorageKind.allCases)
    func lostValuesAndSchemaVersionsCountInTheStoredBytes(_ kind: StorageKind) async throws {
        let harness = try await ServerHarness.make(kind)
        let ann = try #require(try await harness.storage.user(named: "ann"))
        try await harness.run { client in
            _ = try await client.send(.put, "/v1/datasets/todos", token: harness.ann)
            #expect(try await harness.storage.storedBytes(owner: ann.id) == 0)
            try await client.setUp("todos", token: harness.ann)
            let schemaBytes = try await harness.storage.storedBytes(owner: ann.id)
            #expect(schemaBytes > 100)
            let newer = ServerHarness.stamp(1_800_000_000_000, counter: 5)
            #expect(try await client.push("todos", token: harness.ann, key: "1", PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("todos", 1, at: newer)])).status == .ok)
            let afterInsert = try await harness.storage.storedBytes(owner: ann.id)
            // An older edit of the title loses: nothing is logged, its value is kept as lost.
            let older = ServerHarness.stamp(1_799_999_000_000)
            let losing = WireChange(
                record: ServerHarness.uri("todos", 1), entity: "Todo", kind: .update, values: ["title": .text(String(repeating: "x", count: 5_000))],
                stamps: ["title": older])
            #expect(try await client.push("todos", token: harness.ann, key: "2", PushRequest(schemaVersion: 1, changes: [losing])).status == .ok)
            #expect(try await client.pullAll("todos", token: harness.ann, limit: 100).count == 1, "nothing logged")
            #expect(try await harness.storage.storedBytes(owner: ann.id) >= afterInsert + 5_000)
        }
    }

    /// A user's second schema registration while one of theirs runs is refused before its
    /// body is read (429 with Retry-After); another user's goes on.
    @Test func aSecondRegistrationOfOneUserIsRefusedBeforeItsBodyIsRead() async throws {
        let harness = try await ServerHarness.make(.memory)
        let ann = try #require(try await harness.storage.user(named: "ann"))
        try await harness.dependencies.schemaChecks.reserve(ann.id)
        try await harness.run { client in
            _ = try await client.send(.put, "/v1/datasets/d", token: harness.ann)
            _ = try await client.send(.put, "/v1/datasets/d", token: harness.bob)
            let schema = try ServerHarness.schema.canonicalJSON()
            let refused = try await client.send(.put, "/v1/datasets/d/schema", token: harness.ann, body: schema)
            #expect(refused.status == .tooManyRequests && refused.errorCode == "schema_check_busy" && refused.headers[.retryAfter] == "1")
            #expect(try await client.send(.put, "/v1/datasets/d/schema", token: harness.bob, body: schema).status == .created)
            await harness.dependencies.schemaChecks.release(ann.id)
            #expect(try await client.send(.put, "/v1/datasets/d/schema", token: harness.ann, body: schema).status == .created)
        }
    }

    /// Past the byte quota a push is refused whole and stores nothing; the bytes counted are
    /// those the log holds; raising the quota lets the same push in.
    @Test(arguments: StorageKind.allCases)
    func pushesPastTheStoredBytesQuotaAreRefusedAndStoreNothing(_ kind: StorageKind) async throws {
        let harness = try await ServerHarness.make(kind)
        let ann = try #require(try await harness.storage.user(named: "ann"))
        try await harness.run { client in
            try await client.setUp("todos", token: harness.ann)
            try await client.setUp("todos", token: harness.bob)
            // 1 000 bytes past what the schema takes.
            let base = try await harness.storage.storedBytes(owner: ann.id)
            try await harness.storage.setQuota(user: ann.id, UserQuota(bytes: base + 1_000))
            // Under the limit when it starts: taken whole, though it ends past it.
            let first = (1...10).map { ServerHarness.insert("todos", $0) }
            #expect(try await client.push("todos", token: harness.ann, key: "1", PushRequest(schemaVersion: 1, changes: first)).status == .ok)
            let logged = try await client.pullAll("todos", token: harness.ann, limit: 100)
            #expect(logged.count == 10)
            let stored = try await harness.storage.storedBytes(owner: ann.id)
            #expect(stored - base > 1_000 && stored - base < 10 * 400, "stored \(stored - base)")

            let second = PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("todos", 11)])
            let refused = try await client.push("todos", token: harness.ann, key: "2", second)
            #expect(refused.status == .forbidden && refused.errorCode == "quota_exceeded")
            #expect(try refused.decode(WireErrorBody.self).error.message.contains("--bytes"))
            #expect(try await client.pullAll("todos", token: harness.ann, limit: 100).count == 10)
            #expect(try await harness.storage.storedBytes(owner: ann.id) == stored)
            // Another user is not held by ann's use; ann's pulls still answer.
            #expect(try await client.push("todos", token: harness.bob, key: "1", second).status == .ok)

            try await harness.storage.setQuota(user: ann.id, UserQuota(bytes: 1 << 20))
            #expect(try await client.push("todos", token: harness.ann, key: "2", second).status == .ok)
            #expect(try await client.pullAll("todos", token: harness.ann, limit: 100).count == 11)
            #expect(try await harness.storage.storedBytes(owner: ann.id) > stored)
        }
    }

    @Test func theBearerSchemeIsMatchedWhateverItsCase() async throws {
        let harness = try await ServerHarness.make(.memory)
        try await harness.run { client in
            for scheme in ["bearer", "BEARER", "Bearer"] {
                let reply = try await client.send(.get, "/v1/datasets", token: nil, headers: [.authorization: "\(scheme) \(harness.ann)"])
                #expect(reply.status == .ok, "\(scheme)")
            }
            #expect(try await client.send(.get, "/v1/datasets", token: nil, headers: [.authorization: "Basic \(harness.ann)"]).status == .unauthorized)
        }
    }

    /// An answer quotes a short prefix of what it refuses: a 300 000-character column name
    /// does not come back whole.
    @Test func anErrorAnswerDoesNotGrowWithTheInputItRefuses() async throws {
        let harness = try await ServerHarness.make(.memory)
        try await harness.run { client in
            try await client.setUp("todos", token: harness.ann)
            let name = String(repeating: "n", count: 300_000)
            let change = WireChange(
                record: ServerHarness.uri("todos", 1), entity: "Todo", kind: .insert, values: [name: .text("x")], stamps: [name: ServerHarness.stamp()])
            let reply = try await client.push("todos", token: harness.ann, key: "k", PushRequest(schemaVersion: 1, changes: [change]))
            #expect(reply.status == .unprocessableContent && reply.errorCode == "unknown_attribute")
            #expect(reply.body.count < 2_000, "\(reply.body.count) bytes")
        }
    }

    /// A push's key is bound to the push as validated: the same push with its URIs in
    /// another case is a retry, not another push under a reused key.
    @Test func aRetryWithItsURIsInAnotherCaseIsReplayed() async throws {
        let harness = try await ServerHarness.make(.memory)
        try await harness.run { client in
            try await client.setUp("todos", token: harness.ann)
            var lower = ServerHarness.insert("todos", 1)
            lower.record = "tandem://todos/Todo/abcdef00-0000-4000-8000-00000000000a"
            var upper = lower
            upper.record = "tandem://todos/Todo/ABCDEF00-0000-4000-8000-00000000000A"
            let first = try await client.push("todos", token: harness.ann, key: "k", PushRequest(schemaVersion: 1, changes: [upper]))
            #expect(first.status == .ok, "\(String(decoding: first.body, as: UTF8.self))")
            let retry = try await client.push("todos", token: harness.ann, key: "k", PushRequest(schemaVersion: 1, changes: [lower]))
            #expect(retry.status == .ok && retry.body == first.body, "\(String(decoding: retry.body, as: UTF8.self))")
        }
    }

    /// Cursors are bound to their dataset by a keyed tag, not its sequential id: two
    /// datasets' cursors share nothing a client could count with, and a cursor of one server's
    /// data means nothing to a server with other data.
    @Test func cursorsDoNotShowTheDatasetsId() async throws {
        let key = (0..<32).map { UInt8($0) }
        let tags = (Int64(1)...3).map { Cursor.tag(of: $0, key: key) }
        #expect(Set(tags).count == 3 && tags.allSatisfy { $0 > 1_000_000 })
        #expect(Cursor.tag(of: 1, key: key) != Cursor.tag(of: 1, key: key.reversed()))
        let cursor = Cursor(Cursor.Scope(epoch: Cursor.newEpoch(), tag: tags[0]), position: 42)
        #expect(Cursor(cursor.text) == cursor && !cursor.text.contains("1:42"))
        #expect(Cursor("c3.AAAA") == nil && Cursor("c1.MTo0Mg") == nil)
        #expect(Cursor(Cursor(cursor.scope, position: 0).text.replacingOccurrences(of: "c3.", with: "c2.")) == nil, "the form before epochs")
    }

    @Test func theSchemaCacheRemembersAMissingVersionForAWhile() async throws {
        let loads = NIOLockedValueBox(0)
        let history = [SchemaVersionInfo(version: 1, registeredAt: 0, schema: String(decoding: try ServerHarness.schema.canonicalJSON(), as: UTF8.self))]
        let cache = SchemaCache(recheck: .seconds(3600))
        let load: @Sendable () async throws -> [SchemaVersionInfo] = {
            loads.withLockedValue { $0 += 1 }
            return history
        }
        #expect(try await cache.schema(dataset: 1, version: 1, load: load) != nil)
        for _ in 0..<20 { #expect(try await cache.schema(dataset: 1, version: 2, load: load) == nil) }
        #expect(loads.withLockedValue { $0 } == 1)
        // A registration forgets what was read.
        await cache.forget(dataset: 1)
        _ = try await cache.schema(dataset: 1, version: 2, load: load)
        #expect(loads.withLockedValue { $0 } == 2)
    }

    @Test func theSchemaCacheKeepsAtMostItsCapacityOfDatasetsTheLastUsed() async throws {
        let json = String(decoding: try ServerHarness.schema.canonicalJSON(), as: UTF8.self)
        let cache = SchemaCache(capacity: 3)
        let load: @Sendable () async throws -> [SchemaVersionInfo] = { [SchemaVersionInfo(version: 1, registeredAt: 0, schema: json)] }
        for dataset in Int64(1)...3 { _ = try await cache.schema(dataset: dataset, version: 1, load: load) }
        _ = try await cache.schema(dataset: 1, version: 1, load: load)  // 1 used last: 2 is the oldest
        _ = try await cache.schema(dataset: 4, version: 1, load: load)
        #expect(await cache.count == 3)
        let reloads = NIOLockedValueBox(0)
        let counting: @Sendable () async throws -> [SchemaVersionInfo] = {
            reloads.withLockedValue { $0 += 1 }
            return [SchemaVersionInfo(version: 1, registeredAt: 0, schema: json)]
        }
        _ = try await cache.schema(dataset: 1, version: 1, load: counting)
        #expect(reloads.withLockedValue { $0 } == 0)
        _ = try await cache.schema(dataset: 2, version: 1, load: counting)
        #expect(reloads.withLockedValue { $0 } == 1)
    }

    /// One piece of work per owner: a second is refused at once while the first runs, and
    /// another owner's waits its turn instead.
    @Test func theWorkLimiterRefusesAnOwnersSecondWorkWhileItsFirstRuns() async throws {
        let limiter = WorkLimiter(width: 1)
        let state = NIOLockedValueBox((started: false, released: false, otherRan: false))
        @Sendable func wait(for condition: @Sendable () -> Bool) {
            // Long: on a loaded machine the test's own task may wait minutes for a thread (a
            // CI run saw 150 s), and the work must not end before the test looks.
            let deadline = ContinuousClock.now + .seconds(900)
            while !condition(), ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.001) }
        }
        // On a thread of its own: blocking one of the concurrency pool's few threads would
        // starve every other test in the process.
        let first = Task(executorPreference: ThreadPerJobExecutor()) {
            try await limiter.run(for: 1) {
                state.withLockedValue { $0.started = true }
                wait { state.withLockedValue { $0.released } }
            }
        }
        // Waited for without blocking a thread: the first work holds one already.
        let deadline = ContinuousClock.now + .seconds(300)
        while !state.withLockedValue({ $0.started }), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(1)) }
        try #require(state.withLockedValue { $0.started })
        await #expect(throws: WorkLimiter.Busy.self) { try await limiter.run(for: 1) {} }
        let other = Task { try await limiter.run(for: 2) { state.withLockedValue { $0.otherRan = true } } }
        try await Task.sleep(for: .milliseconds(50))
        #expect(!state.withLockedValue { $0.otherRan }, "the other owner waits its turn")
        state.withLockedValue { $0.released = true }
        try await first.value
        try await other.value
        #expect(state.withLockedValue { $0.otherRan })
        try await limiter.run(for: 1) {}
    }

    /// A schema check whose client went away while it waited its turn is dropped, not run:
    /// counted cancelled, nothing registered. (The checks' queue is held by the test.)
    @Test func aSchemaCheckWhoseClientLeftWhileItWaitedIsDropped() async throws {
        let harness = try await ServerHarness.make(.sqlite)
        let held = try await HeldQueue.hold(harness.dependencies.schemaChecks)
        // The application as served (its connection guard included), on a free port.
        let app = buildApplication(harness.dependencies, port: 0, logger: Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() }))
        try await app.test(.live) { client in
            let port = try #require(client.port)
            // Off the test's thread: the server answering it runs in this process.
            let made = try await FairnessProcessTests.onThread { FairnessProcessTests.http("PUT", port: port, "/v1/datasets/todos", token: harness.ann) }
            #expect(made.status == 201)
            let schema = try ServerHarness.schema.canonicalJSON()
            // The client waits long enough for the server to have read its request and queued
            // the check.
            let gaveUp = try await FairnessProcessTests.onThread {
                FairnessProcessTests.http("PUT", port: port, "/v1/datasets/todos/schema", token: harness.ann, body: schema, timeoutMilliseconds: 1_000)
            }
            #expect(gaveUp.status == 0, "no answer while the check waits")
            try await held.release()
            // Long: on a loaded machine the dropped check may wait seconds for a thread; a pass
            // ends the wait as soon as the count shows.
            var counted = false
            let deadline = ContinuousClock.now + .seconds(120)
            while !counted, ContinuousClock.now < deadline {
                counted = String(decoding: harness.dependencies.metrics.registry.emitToBuffer(), as: UTF8.self).contains("tandem_schema_checks_cancelled_total 1")
                if !counted { try await Task.sleep(for: .milliseconds(10)) }
            }
            #expect(counted, "counted cancelled")
            let ann = try #require(try await harness.storage.user(named: "ann"))
            let id = try #require(try await harness.storage.datasetID(owner: ann.id, name: "todos"))
            #expect(try await harness.storage.schemaHistory(dataset: id).isEmpty)
        }
    }

    /// A pipelined request still being answered holds no header timer: the end of the
    /// first answer does not start the wait for a head that has arrived already.
    @Test func aPipelinedRequestBeingAnsweredIsNotCutByTheHeaderTimeout() async throws {
        // 3 s: the timer also runs from the connection's opening to its first head, which a
        // loaded machine can stretch past a second.
        let harness = try await ServerHarness.make(.memory) { $0.headerTimeout = .seconds(3) }
        let held = try await HeldQueue.hold(harness.dependencies.schemaChecks)
        let app = buildApplication(harness.dependencies, port: 0, logger: Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() }))
        try await app.test(.live) { client in
            let port = try #require(client.port)
            let made = try await FairnessProcessTests.onThread { FairnessProcessTests.http("PUT", port: port, "/v1/datasets/d", token: harness.ann) }
            #expect(made.status == 201)
            let schema = String(decoding: try ServerHarness.schema.canonicalJSON(), as: UTF8.self)
            let auth = "Authorization: Bearer \(harness.ann)\r\n"
            let both =
                "GET /v1/capabilities HTTP/1.1\r\nHost: x\r\n\(auth)\r\n"
                + "PUT /v1/datasets/d/schema HTTP/1.1\r\nHost: x\r\n\(auth)Connection: close\r\nContent-Length: \(schema.utf8.count)\r\n\r\n\(schema)"
            let fd = SlowClientTests.halfRequest(port: port, both)
            #expect(fd >= 0)
            defer { close(fd) }
            /// What the server sends until `done` says enough or the connection ends. Long
            /// deadlines: a loaded machine adds seconds; a pass ends the wait early.
            func read(until done: @escaping @Sendable (String) -> Bool) async throws -> String {
                try await FairnessProcessTests.onThread { () -> String in
                    var all = [UInt8]()
                    var buffer = [UInt8](repeating: 0, count: 65_536)
                    let deadline = ContinuousClock.now + .seconds(120)
                    while ContinuousClock.now < deadline, !done(String(decoding: all, as: UTF8.self)) {
                        var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                        guard poll(&ready, 1, 200) > 0 else { continue }
                        let n = recv(fd, &buffer, buffer.count, 0)
                        guard n > 0 else { break }
                        all += buffer[..<n]
                    }
                    return String(decoding: all, as: UTF8.self)
                }
            }
            // The first answer, whole: its head and the bytes its Content-Length announces.
            let first = try await read { text in
                guard let end = text.range(of: "\r\n\r\n") else { return false }
                let length = text[..<end.lowerBound].split(separator: "\r\n")
                    .first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) }
                return text[end.upperBound...].utf8.count >= (length ?? .max)
            }
            #expect(first.hasPrefix("HTTP/1.1 200"), "the first answer: \(first.prefix(300))")
            // The second waits for the checks' queue past the header timeout, counted from the
            // end of the first answer.
            try await Task.sleep(for: .milliseconds(3_800))
            try await held.release()
            let rest = try await read { _ in false }
            let answers = first + rest
            #expect(answers.components(separatedBy: "HTTP/1.1 ").count == 3, "two answers: \(answers.prefix(300))")
            #expect(rest.contains("HTTP/1.1 201"), "the schema was registered and answered")
        }
    }

    @Test func theWorkLimiterRunsAtMostItsWidthAtOnce() async throws {
        let limiter = WorkLimiter(width: 1)
        let state = NIOLockedValueBox((now: 0, most: 0))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    try await limiter.run {
                        state.withLockedValue {
                            $0.now += 1; $0.most = max($0.most, $0.now)
                        }
                        Thread.sleep(forTimeInterval: 0.005)
                        state.withLockedValue { $0.now -= 1 }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(state.withLockedValue { $0.most } == 1)
    }
}

/// Memory storage that, once armed, registers `meanwhile` just before the next registration
/// commits, as another request (or another server node) could.
struct InterleavingStorage: ForwardingStorage {
    let base: MemoryServerStorage
    let meanwhile: String
    let armed = NIOLockedValueBox(false)

    func registerSchema(dataset: Int64, json: String, now: Int64, after versions: Int) async throws -> SchemaRegistration? {
        if armed.withLockedValue({
            let was = $0; $0 = false; return was
        }) {
            _ = try await base.registerSchema(dataset: dataset, json: meanwhile, now: now, after: versions)
        }
        return try await base.registerSchema(dataset: dataset, json: json, now: now, after: versions)
    }
}

/// The schema checks' queue held by a test until ``release()``: work of another owner stands
/// in the way of every check, from a thread of its own (a pool thread blocked for long
/// starves the server in the same process).
struct HeldQueue {
    let state: NIOLockedValueBox<(started: Bool, released: Bool)>
    let holder: Task<Void, any Error>

    static func hold(_ queue: WorkLimiter) async throws -> HeldQueue {
        let state = NIOLockedValueBox((started: false, released: false))
        let holder = Task(executorPreference: ThreadPerJobExecutor()) {
            try await queue.run(for: 999) {
                state.withLockedValue { $0.started = true }
                // Long: a test on a loaded machine may take many seconds to reach its release;
                // the queue let go early would run the check the test expects to wait.
                let deadline = ContinuousClock.now + .seconds(300)
                while !state.withLockedValue({ $0.released }), ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.005) }
            }
        }
        while !state.withLockedValue({ $0.started }) { try await Task.sleep(for: .milliseconds(5)) }
        return HeldQueue(state: state, holder: holder)
    }

    /// Lets the queue go, once its holder has ended.
    func release() async throws {
        state.withLockedValue { $0.released = true }
        try await holder.value
    }
}

/// Runs each job on a new thread: work that blocks on purpose (a test holding a queue) keeps
/// off the concurrency pool, whose few threads the server in the same process needs.
final class ThreadPerJobExecutor: TaskExecutor {
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        Thread.detachNewThread { job.runSynchronously(on: executor) }
    }
}

import Foundation
import Hummingbird
import HTTPTypes
import HummingbirdTesting
import Logging
import TandemSchema
@testable import TandemServer
import TandemServerPostgres
import TandemWire

/// Which storage a test runs on: the in-memory twin, the real SQLite file, and a new database
/// in the PostgreSQL cluster `Scripts/test.sh` starts (`TANDEM_TEST_POSTGRES_URL`; without
/// it, as under a bare `swift test`, the PostgreSQL cases are left out, and
/// `TANDEM_TEST_REQUIRE_POSTGRES=1` makes that an error: see `postgresIsThereWhenRequired`).
enum StorageKind: String, CaseIterable, Sendable {
    case memory, sqlite, postgres

    static var allCases: [StorageKind] { PostgresTestCluster.url == nil ? [.memory, .sqlite] : [.memory, .sqlite, .postgres] }

    func make() async throws -> any ServerStorage {
        switch self {
        case .memory: return MemoryServerStorage()
        case .sqlite:
            let directory = FileManager.default.temporaryDirectory.appending(path: "tandem-server-tests-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            return try SQLiteServerStorage(path: directory.appending(path: "tandem.sqlite").path(percentEncoded: false))
        case .postgres:
            return try await PostgresServerStorage(
                url: PostgresTestCluster.newDatabase(), maxConnections: 4, leaseDeadline: PostgresTestCluster.leaseDeadline, operationDeadline: PostgresTestCluster.operationDeadline,
                logger: Logger(label: "test"))
        }
    }
}

/// A response, with its body as data and decoded.
struct Reply: Sendable {
    var status: HTTPResponse.Status
    var headers: HTTPFields
    var body: Data

    func decode<T: Decodable>(_ type: T.Type) throws -> T { try JSONDecoder().decode(T.self, from: body) }
    var errorCode: String? { (try? decode(WireErrorBody.self))?.error.code }
}

/// The server's router on a storage, with two users (`ann`, `bob`) and a token each.
struct ServerHarness: Sendable {
    let storage: any ServerStorage
    let dependencies: ServerDependencies
    let ann: String
    let bob: String

    static func make(
        _ kind: StorageKind, configure: (inout ServerConfiguration) -> Void = { _ in },
        now: @escaping @Sendable () -> Int64 = { 1_800_000_000_000 }
    ) async throws -> ServerHarness {
        let storage = try await kind.make()
        var configuration = ServerConfiguration()
        configure(&configuration)
        let ann = try await TokenIssuer.issue(for: try await storage.addUser(name: "ann", now: 0), in: storage)
        let bob = try await TokenIssuer.issue(for: try await storage.addUser(name: "bob", now: 0), in: storage)
        return ServerHarness(
            storage: storage, dependencies: ServerDependencies(storage: storage, configuration: configuration, now: now),
            ann: ann, bob: bob)
    }

    /// Runs `body` with a client of the router.
    func run<T: Sendable>(_ body: @Sendable (Client) async throws -> T) async throws -> T {
        let app = Application(router: buildRouter(dependencies), logger: Logger(label: "test"))
        return try await app.test(.router) { client in try await body(Client(client: client)) }
    }

    struct Client: Sendable {
        let client: any TestClientProtocol

        func send(
            _ method: HTTPRequest.Method, _ uri: String, token: String?, body: Data? = nil,
            headers extra: HTTPFields = [:]
        ) async throws -> Reply {
            var headers = extra
            if let token { headers[.authorization] = "Bearer \(token)" }
            if body != nil { headers[.contentType] = "application/json" }
            return try await client.execute(uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(bytes: $0) }) { response in
                Reply(status: response.status, headers: response.headers, body: Data(response.body.readableBytesView))
            }
        }

        func json(
            _ method: HTTPRequest.Method, _ uri: String, token: String?, _ value: some Encodable,
            headers: HTTPFields = [:]
        ) async throws -> Reply {
            try await send(method, uri, token: token, body: try JSONEncoder().encode(value), headers: headers)
        }

        func push(_ dataset: String, token: String, key: String, _ request: PushRequest) async throws -> Reply {
            try await json(.post, "/v1/datasets/\(dataset)/push", token: token, request, headers: [HTTPField.Name("Idempotency-Key")!: key])
        }

        /// Creates the dataset and registers `schema` as version 1.
        func setUp(_ dataset: String, token: String, schema: Schema = ServerHarness.schema) async throws {
            _ = try await send(.put, "/v1/datasets/\(dataset)", token: token)
            _ = try await send(.put, "/v1/datasets/\(dataset)/schema", token: token, body: try schema.canonicalJSON())
        }

        /// One page of a dataset's log after `cursor`.
        func pull(_ dataset: String, token: String, after cursor: String = "", limit: Int) async throws -> PullResponse {
            try await send(.get, "/v1/datasets/\(dataset)/pull?after=\(cursor)&limit=\(limit)", token: token).decode(PullResponse.self)
        }

        /// Every log entry of a dataset, pulling pages of `limit`.
        func pullAll(_ dataset: String, token: String, limit: Int) async throws -> [LogEntry] {
            try await pullPages(dataset, token: token, limit: limit).flatMap { $0 }
        }

        /// Every page of a dataset's log, pulling pages of at most `limit` entries.
        func pullPages(_ dataset: String, token: String, limit: Int) async throws -> [[LogEntry]] {
            var pages: [[LogEntry]] = []
            var cursor = ""
            while true {
                let page = try await pull(dataset, token: token, after: cursor, limit: limit)
                pages.append(page.changes)
                cursor = page.nextCursor
                if !page.hasMore { return pages }
            }
        }
    }

    /// A schema with one entity, `Todo` (title, rank?, people.name, people.age).
    static let schema = Schema(entities: [
        Schema.Entity(
            name: "Todo",
            attributes: [
                Schema.Attribute(name: "title", type: .scalar(.string)),
                Schema.Attribute(name: "rank", type: .scalar(.int), isOptional: true),
                Schema.Attribute(
                    name: "people",
                    type: .composite(
                        .init(
                            typeName: "People",
                            fields: [
                                .init(name: "name", type: .scalar(.string)), .init(name: "age", type: .scalar(.int)),
                            ]))),
            ])
    ])

    static func stamp(_ physical: UInt64 = 1_800_000_000_000, counter: UInt16 = 0, node: UInt64 = 7) -> String {
        HLCTimestamp(physical: physical, counter: counter, node: node).description
    }

    static func uri(_ dataset: String, _ n: Int) -> String {
        "tandem://\(dataset)/Todo/" + String(format: "00000000-0000-0000-0000-%012d", n)
    }

    static func insert(_ dataset: String, _ n: Int, title: String = "t", at stamp: String = ServerHarness.stamp()) -> WireChange {
        WireChange(
            record: uri(dataset, n), entity: "Todo", kind: .insert,
            values: ["title": .text(title), "people.name": .text("Ann"), "people.age": .integer(31)],
            stamps: ["title": stamp, "people.name": stamp, "people.age": stamp])
    }
}

/// A storage that hands every call to a ``MemoryServerStorage``; a test's wrapper implements
/// only the calls it changes (fails, delays, interleaves).
protocol ForwardingStorage: ServerStorage {
    var base: MemoryServerStorage { get }
}

extension ForwardingStorage {
    var cursorKey: [UInt8] { base.cursorKey }
    var epoch: UInt64 { base.epoch }
    var logSignals: LogSignals { base.logSignals }
    func startNewEpoch() async throws -> UInt64 { try await base.startNewEpoch() }
    func addUser(name: String, now: Int64, subject: String?) async throws -> ServerUser { try await base.addUser(name: name, now: now, subject: subject) }
    func user(subject: String) async throws -> ServerUser? { await base.user(subject: subject) }
    func user(named name: String) async throws -> ServerUser? { await base.user(named: name) }
    func users(now: Int64) async throws -> [UserSummary] { await base.users(now: now) }
    func removeUser(id: Int64) async throws { try await base.removeUser(id: id) }
    func addToken(id: String, secretHash: String, user: Int64, scope: TokenScope, now: Int64) async throws {
        await base.addToken(id: id, secretHash: secretHash, user: user, scope: scope, now: now)
    }
    func revokeToken(id: String) async throws -> Bool { await base.revokeToken(id: id) }
    func token(id: String) async throws -> StoredToken? { await base.token(id: id) }
    func tokens(user: Int64?) async throws -> [TokenInfo] { await base.tokens(user: user) }
    func setQuota(user: Int64, _ quota: UserQuota) async throws { try await base.setQuota(user: user, quota) }
    func setOperator(user: Int64, _ isOperator: Bool) async throws { try await base.setOperator(user: user, isOperator) }
    func datasetOverviews() async throws -> [DatasetOverview] { await base.datasetOverviews() }
    func storedBytes(owner: Int64) async throws -> Int64 { await base.storedBytes(owner: owner) }
    func createDataset(owner: Int64, name: String, now: Int64, limit: Int) async throws -> (DatasetInfo, created: Bool) {
        try await base.createDataset(owner: owner, name: name, now: now, limit: limit)
    }
    func datasets(owner: Int64) async throws -> [DatasetInfo] { await base.datasets(owner: owner) }
    func datasetID(owner: Int64, name: String) async throws -> Int64? { await base.datasetID(owner: owner, name: name) }
    func datasets(reachableBy user: Int64) async throws -> [ReachableDataset] { await base.datasets(reachableBy: user) }
    func deleteDataset(id: Int64) async throws -> Bool { await base.deleteDataset(id: id) }
    func purgeDeletedDatasets(limit: Int) async throws -> Int { await base.purgeDeletedDatasets(limit: limit) }
    func records(dataset: Int64, after uri: String, limit: Int, maxBytes: Int) async throws -> (records: [StoredRecord], hasMore: Bool) {
        await base.records(dataset: dataset, after: uri, limit: limit, maxBytes: maxBytes)
    }
    func compaction(dataset: Int64) async throws -> CompactionState { try await base.compaction(dataset: dataset) }
    func compactionStates() async throws -> [CompactionState] { try await base.compactionStates() }
    func addLogMark(dataset: Int64, position: Int64, at: Int64) async throws { await base.addLogMark(dataset: dataset, position: position, at: at) }
    func logMark(dataset: Int64, notAfter at: Int64?, notPast position: Int64?) async throws -> LogMark? {
        await base.logMark(dataset: dataset, notAfter: at, notPast: position)
    }
    func compactLog(dataset: Int64, through: Int64, limit: Int) async throws -> Int { await base.compactLog(dataset: dataset, through: through, limit: limit) }
    func pruneTombstones(dataset: Int64, before: Int64, after uri: String, limit: Int) async throws -> (last: String?, pruned: Int) {
        await base.pruneTombstones(dataset: dataset, before: before, after: uri, limit: limit)
    }
    func deletedDatasetIDs(owner: Int64, name: String) async throws -> [Int64] { await base.deletedDatasetIDs(owner: owner, name: name) }
    func setMember(dataset: Int64, user: Int64, role: DatasetRole, now: Int64) async throws {
        await base.setMember(dataset: dataset, user: user, role: role, now: now)
    }
    func removeMember(dataset: Int64, user: Int64) async throws -> Bool { await base.removeMember(dataset: dataset, user: user) }
    func members(dataset: Int64) async throws -> [DatasetMember] { await base.members(dataset: dataset) }
    func role(dataset: Int64, user: Int64) async throws -> DatasetRole? { await base.role(dataset: dataset, user: user) }
    func schemaHistory(dataset: Int64) async throws -> [SchemaVersionInfo] { await base.schemaHistory(dataset: dataset) }
    func registerSchema(dataset: Int64, json: String, now: Int64, after versions: Int) async throws -> SchemaRegistration? {
        try await base.registerSchema(dataset: dataset, json: json, now: now, after: versions)
    }
    func pruneIdempotencyKeys(before cutoff: Int64) async throws -> Int { try await base.pruneIdempotencyKeys(before: cutoff) }
    func push(dataset: Int64, key: String, requestHash: String, now: Int64, changes: Int, job: PushJob) async throws -> StoredPush {
        try await base.push(dataset: dataset, key: key, requestHash: requestHash, now: now, changes: changes, job: job)
    }
    func pull(dataset: Int64, after position: Int64, limit: Int) async throws -> (entries: [LogEntry], hasMore: Bool) {
        await base.pull(dataset: dataset, after: position, limit: limit)
    }
    func logHead(dataset: Int64) async throws -> Int64 { await base.logHead(dataset: dataset) }
    func checkHealth() async throws {}
}

import Foundation
import Hummingbird
import HTTPTypes
import HummingbirdTesting
import Logging
import Testing
import TandemSchema
import TandemServerTestSupport
@testable import TandemServer
import TandemWire

/// The isolation matrix: every operation `Server/openapi.yaml` documents × every kind of
/// caller (owner, admin, writer, reader, removed member, stranger, expired token, token
/// scoped to another dataset, read-only token, token scoped to this dataset, a writer signed
/// in with the app's JWT, an expired JWT), each cell on a
/// fresh server. A refused cell answers its documented status and code, changes nothing
/// stored and leaks no record; an allowed one succeeds (and a mutation shows in the state,
/// so the "nothing changed" check can fail). The operations come from the document: a new
/// endpoint fails here until it is classified.
@Suite("Access matrix: every endpoint × every caller")
struct AccessMatrixTests {
    /// Who calls.
    enum Caller: String, CaseIterable, Sendable {
        case owner, admin, writer, reader, removed, stranger, expired, otherScoped, readOnly, scopedHere, signedIn, signedInExpired

        /// Their standing in `ann/todos`, for the expected answer.
        var role: DatasetRole? {
            switch self {
            case .owner, .otherScoped, .readOnly, .scopedHere, .expired: .admin
            case .admin: .admin
            case .writer, .signedIn, .signedInExpired: .writer
            case .reader: .reader
            case .removed, .stranger: nil
            }
        }

        var isExpired: Bool { self == .expired || self == .signedInExpired }
    }

    /// The keys of the app's identity provider (made once: RSA keys take a while).
    static let identityProvider = Result { try JWTTestKeys() }

    /// What an operation needs, read off its method and path.
    enum Need: Equatable {
        /// No token at all (health, metrics, the document).
        case nothing
        /// Any valid token (capabilities, the caller's own dataset list).
        case token
        /// A role in the dataset; `mutates`: the operation changes what is stored.
        case role(DatasetRole, mutates: Bool)
        /// The owner only (deleting the dataset).
        case owner
    }

    /// Classifies a documented operation; `nil`: not classified yet (the test fails).
    static func need(_ method: String, _ path: String) -> Need? {
        switch (method, path) {
        case ("GET", "/health"), ("GET", "/metrics"), ("GET", "/openapi.yaml"): .nothing
        case ("GET", "/v1/capabilities"), ("GET", "/v1/datasets"): .token
        case ("PUT", "/v1/datasets/{dataset}"): .role(.reader, mutates: false)
        case ("DELETE", "/v1/datasets/{dataset}"): .owner
        case ("GET", "/v1/datasets/{dataset}/schema"), ("GET", "/v1/datasets/{dataset}/pull"), ("GET", "/v1/datasets/{dataset}/snapshot"), ("GET", "/v1/datasets/{dataset}/lag"),
            ("GET", "/v1/datasets/{dataset}/members"):
            .role(.reader, mutates: false)
        case ("PUT", "/v1/datasets/{dataset}/schema"), ("POST", "/v1/datasets/{dataset}/push"): .role(.writer, mutates: true)
        case ("PUT", "/v1/datasets/{dataset}/members/{user}"), ("DELETE", "/v1/datasets/{dataset}/members/{user}"): .role(.admin, mutates: true)
        default: nil
        }
    }

    /// The status and error code `caller` gets for an operation needing `need`.
    static func expected(_ caller: Caller, _ need: Need, method: String, path: String) -> (status: Int, code: String?) {
        switch need {
        case .nothing: return (200, nil)
        case .token: return caller.isExpired ? (401, "token_expired") : (200, nil)
        case .role, .owner:
            if caller.isExpired { return (401, "token_expired") }
            if caller == .otherScoped { return (403, "token_scope") }
            guard let role = caller.role else { return (404, "not_shared") }
            let needed: DatasetRole
            if case .role(let level, _) = need { needed = level } else { needed = .admin }
            guard role.allows(needed) else { return (403, "role_too_low") }
            if needed > .reader, caller == .readOnly { return (403, "read_only_token") }
            if need == .owner, caller == .admin { return (403, "not_owner") }
            if method == "DELETE" { return (204, nil) }
            if method == "PUT", path.hasSuffix("/schema") { return (201, nil) }
            return (200, nil)
        }
    }

    /// A server where `ann` owns `todos` (one record, titled "secret") and `other`;
    /// carol/dave/erin are admin/writer/reader, frank was a writer and was removed, gina a
    /// reader whom the member operations name; `bob` is a stranger. Returns the harness and each caller's token.
    static func world() async throws -> (ServerHarness, [Caller: String]) {
        let now: Int64 = 1_800_000_000_000
        let base = try await ServerHarness.make(.memory, now: { now })
        let keys = try identityProvider.get()
        var dependencies = base.dependencies
        dependencies.jwt = JWTVerifier(
            settings: JWTSettings(issuer: JWTTestKeys.issuer, audience: JWTTestKeys.audience), source: MemoryJWKSSource(try keys.jwks()),
            logger: Logger(label: "test"))
        let harness = ServerHarness(storage: base.storage, dependencies: dependencies, ann: base.ann, bob: base.bob)
        let storage = harness.storage
        var tokens: [Caller: String] = [.owner: harness.ann, .stranger: harness.bob]
        try await harness.run { client in
            try await client.setUp("todos", token: harness.ann)
            try await client.setUp("other", token: harness.ann)
            let pushed = try await client.push(
                "todos", token: harness.ann, key: "seed", PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("todos", 1, title: "secret")]))
            #expect(pushed.status == .ok)
        }
        let ann = try #require(try await storage.user(named: "ann"))
        let todos = try #require(try await storage.datasetID(owner: ann.id, name: "todos"))
        let other = try #require(try await storage.datasetID(owner: ann.id, name: "other"))
        try await storage.setMember(dataset: todos, user: try await storage.addUser(name: "hank", now: 0, subject: "hank").id, role: .writer, now: 0)
        tokens[.signedIn] = try keys.token(JWTTestKeys.claims(sub: "hank", now: now), alg: "ES256", kid: "ec-1", signer: .ec)
        tokens[.signedInExpired] = try keys.token(
            JWTTestKeys.claims(sub: "hank", now: now, ["exp": now / 1000]), alg: "RS256", kid: "rsa-1", signer: .rsa)
        for (name, caller, role) in [("carol", Caller.admin, DatasetRole.admin), ("dave", .writer, .writer), ("erin", .reader, .reader), ("frank", .removed, .writer)] {
            let user = try await storage.addUser(name: name, now: 0)
            try await storage.setMember(dataset: todos, user: user.id, role: role, now: 0)
            tokens[caller] = try await TokenIssuer.issue(for: user, in: storage)
        }
        try await storage.setMember(dataset: todos, user: try await storage.addUser(name: "gina", now: 0).id, role: .reader, now: 0)
        let frank = try #require(try await storage.user(named: "frank"))
        _ = try await storage.removeMember(dataset: todos, user: frank.id)
        tokens[.expired] = try await TokenIssuer.issue(for: ann, in: storage, scope: TokenScope(expiresAt: now - 1))
        tokens[.otherScoped] = try await TokenIssuer.issue(for: ann, in: storage, scope: TokenScope(datasets: [other]))
        tokens[.readOnly] = try await TokenIssuer.issue(for: ann, in: storage, scope: TokenScope(readOnly: true))
        tokens[.scopedHere] = try await TokenIssuer.issue(for: ann, in: storage, scope: TokenScope(datasets: [todos], expiresAt: now + 60_000))
        return (harness, tokens)
    }

    /// What is stored about `ann/todos`: its log, members, schema versions, and ann's datasets.
    static func snapshot(_ storage: any ServerStorage) async throws -> String {
        let ann = try #require(try await storage.user(named: "ann"))
        let datasets = try await storage.datasets(reachableBy: ann.id).map(\.info.name)
        guard let id = try await storage.datasetID(owner: ann.id, name: "todos") else { return "todos deleted; \(datasets)" }
        let log = try await storage.pull(dataset: id, after: 0, limit: 1_000).entries.map { "\($0.position):\($0.change.record)" }
        let members = try await storage.members(dataset: id).map { "\($0.user)=\($0.role.rawValue)" }
        return "log \(log); members \(members); schemas \(try await storage.schemaHistory(dataset: id).count); datasets \(datasets)"
    }

    /// The request of an operation, on `ann~todos`, the member path naming gina.
    static func request(_ method: String, _ path: String) throws -> (HTTPRequest.Method, String, Data?) {
        let concrete = path.replacingOccurrences(of: "{dataset}", with: "ann~todos").replacingOccurrences(of: "{user}", with: "gina")
        var body: Data?
        if path.hasSuffix("/members/{user}"), method == "PUT" { body = try JSONEncoder().encode(MemberRole(role: .writer)) }
        if path.hasSuffix("/schema"), method == "PUT" {
            var schema = ServerHarness.schema
            schema.entities[0].attributes.append(Schema.Attribute(name: "note", type: .scalar(.string), isOptional: true))
            body = try schema.canonicalJSON()
        }
        if path.hasSuffix("/push") {
            body = try JSONEncoder().encode(
                PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("todos", 2, at: ServerHarness.stamp(1_799_999_000_000))]))
        }
        return (HTTPRequest.Method(rawValue: method)!, concrete, body)
    }

    @Test func everyDocumentedOperationIsClassified() throws {
        let unclassified = try OpenAPITests.operations().keys.filter { operation in
            let parts = operation.split(separator: " ")
            return Self.need(String(parts[0]), String(parts[1])) == nil
        }
        #expect(unclassified.isEmpty, "classify these in AccessMatrixTests.need: \(unclassified.sorted())")
    }

    @Test(arguments: Caller.allCases)
    func everyOperationAnswersThisCallerAsDocumentedAndRefusalsChangeAndLeakNothing(caller: Caller) async throws {
        for (operation, documented) in try OpenAPITests.operations().sorted(by: { $0.key < $1.key }) {
            let parts = operation.split(separator: " ")
            let (method, path) = (String(parts[0]), String(parts[1]))
            guard let need = Self.need(method, path) else { continue }
            let (harness, tokens) = try await Self.world()
            let before = try await Self.snapshot(harness.storage)
            let (httpMethod, concrete, body) = try Self.request(method, path)
            let expected = Self.expected(caller, need, method: method, path: path)
            let reply = try await harness.run { client in
                try await client.send(
                    httpMethod, concrete, token: need == .nothing ? nil : tokens[caller], body: body,
                    headers: [HTTPField.Name("Idempotency-Key")!: "matrix"])
            }
            let text = String(decoding: reply.body, as: UTF8.self)
            let cell = "\(caller.rawValue) × \(operation)"
            #expect(Int(reply.status.code) == expected.status, "\(cell): \(reply.status.code) \(text)")
            #expect(documented.contains(Int(reply.status.code)), "\(cell): \(reply.status.code) is not documented")
            if let code = expected.code { #expect(reply.errorCode == code, "\(cell): \(text)") }
            let after = try await Self.snapshot(harness.storage)
            if expected.status >= 400 {
                #expect(after == before, "\(cell) was refused but changed what is stored")
                #expect(!text.contains("secret") && !text.contains(ServerHarness.uri("todos", 1)), "\(cell) leaked a record: \(text)")
            } else if case .role(_, mutates: true) = need {
                #expect(after != before, "\(cell) succeeded but changed nothing: the matrix cannot see changes")
            } else if need == .owner {
                #expect(after != before, "\(cell) deleted nothing")
            }
            if operation == "GET /v1/datasets", expected.status == 200 {
                let names = try reply.decode(DatasetList.self).datasets.map { "\($0.owner ?? "?")/\($0.name)" }
                let reaches = caller.role != nil && caller != .otherScoped
                #expect(names.contains("ann/todos") == reaches, "\(cell) lists \(names)")
            }
        }
    }
}

import Foundation
import Testing
import TandemSchema
import TandemSchemaExtract
import TandemSchemaTestSupport
@testable import TandemServer
import TandemWire

/// Every compatibility rule through `PUT /v1/datasets/{d}/schema`: release 1 is registered,
/// then release 2 is accepted (safe and warning changes) or refused with 409 and the rule's
/// finding (breaking changes). The source pairs are the schema checker's own rule cases.
@Suite("Schema registry, every rule end to end")
struct SchemaRegistryTests {
    static func schemaJSON(_ source: String) throws -> Data {
        try SchemaExtractor().extract([SourceText(path: "Models.swift", text: source)]).schema.canonicalJSON()
    }

    @Test(arguments: ruleCases)
    func releaseTwoIsAcceptedOrRefusedByItsRule(_ rule: RuleCase) async throws {
        let harness = try await ServerHarness.make(.memory)
        try await harness.run { client in
            _ = try await client.send(.put, "/v1/datasets/notes", token: harness.ann)
            let v1 = try await client.send(.put, "/v1/datasets/notes/schema", token: harness.ann, body: try Self.schemaJSON(rule.v1))
            #expect(v1.status == .created)
            let v2 = try await client.send(.put, "/v1/datasets/notes/schema", token: harness.ann, body: try Self.schemaJSON(rule.v2))
            let history = try await client.send(.get, "/v1/datasets/notes/schema", token: harness.ann).decode(SchemaHistory.self)
            switch rule.verdict {
            case .safe, .warning:
                #expect(v2.status == .created, "\(String(decoding: v2.body, as: UTF8.self))")
                #expect(history.versions.map(\.version) == [1, 2])
            case .breaking:
                #expect(v2.status == .conflict)
                let error = try v2.decode(WireErrorBody.self).error
                #expect(error.code == "schema_incompatible")
                #expect(
                    error.findings?.contains { $0.rule == rule.rule && $0.path == rule.path && $0.verdict == "breaking" } == true,
                    "findings: \(error.findings ?? [])")
                #expect(error.findings?.allSatisfy { !$0.message.isEmpty && !$0.hint.isEmpty } == true)
                #expect(history.versions.map(\.version) == [1])
            }
        }
    }

    @Test func aVersionIsCheckedAgainstEveryEarlierVersionNotOnlyTheLatest() async throws {
        // Version 2 (dropping `body`, breaking against version 1) is put straight into storage, as
        // an older server without the check could have. Version 3 only adds to version 2, but
        // still lacks version 1's `body`: refused, naming version 1.
        let v1 = note(base + "\nvar body: String?")
        let v2 = note(base)
        let v3 = note(base + "\nvar rank: Int?")
        let harness = try await ServerHarness.make(.sqlite)
        try await harness.run { client in
            _ = try await client.send(.put, "/v1/datasets/notes", token: harness.ann)
            #expect(try await client.send(.put, "/v1/datasets/notes/schema", token: harness.ann, body: try Self.schemaJSON(v1)).status == .created)
            let id = try #require(try await harness.storage.datasetID(owner: 1, name: "notes"))
            let forced = try await harness.storage.registerSchema(dataset: id, json: String(decoding: try Self.schemaJSON(v2), as: UTF8.self), now: 0, after: 1)
            #expect(forced?.version == 2)
            let refused = try await client.send(.put, "/v1/datasets/notes/schema", token: harness.ann, body: try Self.schemaJSON(v3))
            #expect(refused.status == .conflict)
            let error = try refused.decode(WireErrorBody.self).error
            #expect(error.findings?.map(\.rule) == ["ATTRIBUTE_REMOVED"])
            #expect(error.findings?.first?.path == "Note.body")
            #expect(error.message.contains("version 1") && !error.message.contains("version 2"))
        }
    }
}

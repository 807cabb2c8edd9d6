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

    /// A user's old device syncing after their new one registered a newer version is refused
    /// as any breaking schema is (a release removing what it lacks looks the same), with a
    /// message saying that updating the app is the way; a schema breaking both ways is not
    /// called older.
    @Test func anOlderAppVersionAfterANewerOneIsToldToUpdate() async throws {
        let older = note(base)
        let newer = note(base + "\nvar body: String?\nvar kind: Kind = .one", "enum Kind: Int, Codable, CaseIterable { case one, two }")
        let unrelated = note("var title: Int = 0")
        let harness = try await ServerHarness.make(.memory)
        try await harness.run { client in
            _ = try await client.send(.put, "/v1/datasets/notes", token: harness.ann)
            #expect(try await client.send(.put, "/v1/datasets/notes/schema", token: harness.ann, body: try Self.schemaJSON(newer)).status == .created)
            let refused = try await client.send(.put, "/v1/datasets/notes/schema", token: harness.ann, body: try Self.schemaJSON(older))
            #expect(refused.status == .conflict)
            let error = try refused.decode(WireErrorBody.self).error
            #expect(error.findings?.map(\.rule).contains("ATTRIBUTE_REMOVED") == true)
            #expect(error.message.contains("older than those versions") && error.message.contains("once it is updated"), "\(error.message)")
            let breaking = try await client.send(.put, "/v1/datasets/notes/schema", token: harness.ann, body: try Self.schemaJSON(unrelated))
            #expect(breaking.status == .conflict)
            #expect(try !breaking.decode(WireErrorBody.self).error.message.contains("older than"))
            let history = try await client.send(.get, "/v1/datasets/notes/schema", token: harness.ann).decode(SchemaHistory.self)
            #expect(history.versions.map(\.version) == [1])
        }
    }

    /// A published schema (extracted from the sources: every enum case listed) and the one a
    /// running app records (no cases for an enum that is not CaseIterable) are one version.
    @Test func anAppsSchemaWithoutEnumCasesIsThePublishedVersionThatListsThem() async throws {
        let source = note(base + "\nvar kind: MyType = .one", "enum MyType: Int, Codable { case one, two, three }")
        let published = try SchemaExtractor().extract([SourceText(path: "Models.swift", text: source)]).schema
        var running = published
        running.entities[0].attributes = running.entities[0].attributes.map { attribute in
            var attribute = attribute
            if case .enumeration(var enumeration) = attribute.type {
                enumeration.cases = nil
                attribute.type = .enumeration(enumeration)
            }
            return attribute
        }
        #expect(running != published)
        let app = running
        let harness = try await ServerHarness.make(.memory)
        try await harness.run { client in
            _ = try await client.send(.put, "/v1/datasets/notes", token: harness.ann)
            let first = try await client.send(.put, "/v1/datasets/notes/schema", token: harness.ann, body: try published.canonicalJSON())
            #expect(first.status == .created)
            let registered = try await client.send(.put, "/v1/datasets/notes/schema", token: harness.ann, body: try app.canonicalJSON())
            #expect(registered.status == .ok)
            #expect(try registered.decode(SchemaRegistration.self) == SchemaRegistration(version: 1, created: false))
            // A version the app's schema is not (a case changed) is checked and refused.
            var changed = published
            if case .enumeration(var enumeration) = changed.entities[0].attributes[1].type {
                enumeration.cases![2].rawValue = "9"
                changed.entities[0].attributes[1].type = .enumeration(enumeration)
            }
            let refused = try await client.send(.put, "/v1/datasets/notes/schema", token: harness.ann, body: try changed.canonicalJSON())
            #expect(refused.status == .conflict)
            #expect(try refused.decode(WireErrorBody.self).error.findings?.map(\.rule) == ["ENUM_CASE_RAW_VALUE_CHANGED"])
            let history = try await client.send(.get, "/v1/datasets/notes/schema", token: harness.ann).decode(SchemaHistory.self)
            #expect(history.versions.map(\.version) == [1])
        }
    }

    /// A raw value none of the cases of the push's schema version is refused with the value
    /// and the cases named, and nothing is stored; where the version does not list the cases
    /// (an app's own schema, not published), it is taken as it comes.
    @Test(arguments: StorageKind.allCases)
    func aRawValueOutsideTheCasesOfItsVersionIsRefused(_ kind: StorageKind) async throws {
        let source = note(
            base + "\nvar kind: MyType = .one\nvar info: Info? = nil",
            """
            enum MyType: Int, Codable { case one, two, three = 7 }
            enum Level: String, Codable, CaseIterable { case low, high }
            struct Info: Codable { var level: Level }
            """)
        let published = try SchemaExtractor().extract([SourceText(path: "Models.swift", text: source)]).schema
        let harness = try await ServerHarness.make(kind)
        try await harness.run { client in
            _ = try await client.send(.put, "/v1/datasets/notes", token: harness.ann)
            #expect(try await client.send(.put, "/v1/datasets/notes/schema", token: harness.ann, body: try published.canonicalJSON()).status == .created)
            func change(_ n: Int, _ values: [String: WireValue]) -> WireChange {
                let stamp = ServerHarness.stamp()
                return WireChange(
                    record: "tandem://notes/Note/" + String(format: "00000000-0000-0000-0000-%012d", n), entity: "Note", kind: .insert,
                    values: values, stamps: values.mapValues { _ in stamp })
            }
            let refused = try await client.push(
                "notes", token: harness.ann, key: "k1",
                PushRequest(schemaVersion: 1, changes: [change(1, ["title": .text("a"), "kind": .integer(7)]), change(2, ["title": .text("b"), "kind": .integer(99)])]))
            #expect(refused.status == .unprocessableContent)
            let error = try refused.decode(WireErrorBody.self).error
            #expect(error.code == "invalid_enum_value")
            #expect(error.message.contains("changes[1].values.kind: 99 is not a case of enum MyType in schema version 1"))
            #expect(error.message.contains("0 (one), 1 (two), 7 (three)"))
            #expect(try await client.pullAll("notes", token: harness.ann, limit: 10).isEmpty, "nothing of the push is stored")
            let leaf = try await client.push(
                "notes", token: harness.ann, key: "k2", PushRequest(schemaVersion: 1, changes: [change(3, ["title": .text("c"), "info.level": .text("medium")])]))
            #expect(leaf.status == .unprocessableContent)
            #expect(try leaf.decode(WireErrorBody.self).error.message.contains("info.level: \"medium\" is not a case of enum Level"))
            let fine = try await client.push(
                "notes", token: harness.ann, key: "k3",
                PushRequest(schemaVersion: 1, changes: [change(4, ["title": .text("d"), "kind": .integer(7), "info.level": .text("high")])]))
            #expect(fine.status == .ok)
        }
        // A version that does not list the cases checks nothing of them.
        var running = published
        running.entities[0].attributes[1].type = .enumeration(Schema.Enumeration(typeName: "MyType", rawType: .int, cases: nil))
        let app = running
        let other = try await ServerHarness.make(kind)
        try await other.run { client in
            _ = try await client.send(.put, "/v1/datasets/notes", token: other.ann)
            #expect(try await client.send(.put, "/v1/datasets/notes/schema", token: other.ann, body: try app.canonicalJSON()).status == .created)
            let stamp = ServerHarness.stamp()
            let taken = try await client.push(
                "notes", token: other.ann, key: "k",
                PushRequest(
                    schemaVersion: 1,
                    changes: [
                        WireChange(
                            record: "tandem://notes/Note/00000000-0000-0000-0000-000000000001", entity: "Note", kind: .insert,
                            values: ["title": .text("a"), "kind": .integer(99)], stamps: ["*": stamp])
                    ]))
            #expect(taken.status == .ok)
        }
    }
}

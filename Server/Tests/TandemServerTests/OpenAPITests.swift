import Foundation
import Hummingbird
import HTTPTypes
import Testing
import TandemSchema
@testable import TandemServer
import TandemWire

/// `Server/openapi.yaml` is served as is, documents every route, and every documented
/// operation answers with one of its documented statuses.
@Suite("The OpenAPI document stays true")
struct OpenAPITests {
    static let file = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "../../openapi.yaml").standardizedFileURL

    /// (path, method) → documented statuses, read from the YAML's layout.
    static func operations() throws -> [String: Set<Int>] {
        let text = try String(contentsOf: file, encoding: .utf8)
        var operations: [String: Set<Int>] = [:]
        var path: String?
        var method: String?
        var inPaths = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "paths:" { inPaths = true; continue }
            if inPaths, !line.hasPrefix(" "), !line.isEmpty { break }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), !line.hasPrefix("   ") { path = String(line.dropFirst(2).dropLast()); method = nil; continue }
            for verb in ["get", "put", "post", "delete", "patch"] where line == "    \(verb):" { method = verb.uppercased() }
            if let path, let method, line.hasPrefix("        \""), let status = Int(line.dropFirst(9).prefix(3)) {
                operations["\(method) \(path)", default: []].insert(status)
            }
        }
        return operations
    }

    @Test func theServedDocumentIsTheFile() async throws {
        let harness = try await ServerHarness.make(.memory)
        let expected = try String(contentsOf: Self.file, encoding: .utf8)
        try await harness.run { client in
            let reply = try await client.send(.get, "/openapi.yaml", token: nil)
            #expect(reply.status == .ok)
            #expect(String(decoding: reply.body, as: UTF8.self) == expected)
        }
    }

    @Test func anUnsupportedMethodIs405WithAllow() async throws {
        let harness = try await ServerHarness.make(.memory)
        try await harness.run { client in
            let reply = try await client.send(.delete, "/v1/datasets/todos/schema", token: harness.ann)
            #expect(reply.status == .methodNotAllowed && reply.errorCode == "method_not_allowed")
            #expect(reply.headers[.allow] == "GET, PUT")
            #expect(try await client.send(.get, "/nowhere", token: harness.ann).status == .notFound)
            // Every documented path answers 405 with Allow to a method it does not document.
            for (operation, _) in try Self.operations() {
                let path = String(operation.split(separator: " ")[1]).replacingOccurrences(of: "{dataset}", with: "todos").replacingOccurrences(of: "{user}", with: "bob")
                let trace = try await client.send(HTTPRequest.Method("TRACE")!, path, token: harness.ann)
                #expect(trace.status == .methodNotAllowed, "TRACE \(path) answered \(trace.status.code)")
                #expect(trace.headers[.allow] != nil)
            }
        }
    }

    @Test func everyDocumentedOperationAnswersADocumentedStatus() async throws {
        let operations = try Self.operations()
        #expect(operations.count == 16, "\(operations.keys.sorted())")
        let harness = try await ServerHarness.make(.sqlite)
        try await harness.run { client in
            try await client.setUp("todos", token: harness.ann)
            for (operation, statuses) in operations.sorted(by: { $0.key < $1.key }) {
                let parts = operation.split(separator: " ")
                let method = HTTPRequest.Method(rawValue: String(parts[0]))!
                let path = parts[1].replacingOccurrences(of: "{dataset}", with: "todos").replacingOccurrences(of: "{user}", with: "bob")
                let needsToken = path.hasPrefix("/v1")
                var body: Data?
                if path.contains("/members/") && method == .put { body = try JSONEncoder().encode(MemberRole(role: .reader)) }
                if path.hasSuffix("/schema") && method == .put { body = try ServerHarness.schema.canonicalJSON() }
                if path.hasSuffix("/push") {
                    let stamp = ServerHarness.stamp(1_799_999_000_000)
                    body = try JSONEncoder().encode(PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("todos", 1, at: stamp)]))
                }
                let headers: HTTPFields = [HTTPField.Name("Idempotency-Key")!: "openapi"]
                for token in needsToken ? [harness.ann, nil] : [nil] {
                    let reply = try await client.send(method, path, token: token, body: body, headers: headers)
                    #expect(statuses.contains(reply.status.code), "\(operation) answered \(reply.status.code), documented: \(statuses.sorted())")
                    if reply.status.code >= 400 {
                        #expect(reply.errorCode != nil, "\(operation): an error without the documented body")
                    }
                }
            }
        }
    }
}

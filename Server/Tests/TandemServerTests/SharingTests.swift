import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
@testable import TandemServer
import TandemWire

/// Datasets shared between users: roles, their refusals, members managed over HTTP by
/// admins, and a removal that takes effect at the next request.
@Suite("Sharing a dataset")
struct SharingTests {
    /// `ann`'s dataset `todos` with one record, shared with `bob` as `role` (none: not shared).
    static func shared(_ kind: StorageKind = .memory, role: DatasetRole?, _ body: @Sendable (ServerHarness, ServerHarness.Client) async throws -> Void) async throws {
        let harness = try await ServerHarness.make(kind) { $0.maxPullWait = LivePullTests.maxPullWait }
        try await harness.run { client in
            try await client.setUp("todos", token: harness.ann)
            let first = try await client.push("todos", token: harness.ann, key: "k1", PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("todos", 1)]))
            #expect(first.status == .ok)
            if let role {
                let reply = try await client.json(.put, "/v1/datasets/todos/members/bob", token: harness.ann, MemberRole(role: role))
                #expect(reply.status == .created, "\(String(decoding: reply.body, as: UTF8.self))")
            }
            try await body(harness, client)
        }
    }

    @Test(arguments: StorageKind.allCases)
    func aWriterPullsPushesAndRegistersUnderTheOwnersNameAndItsURIs(kind: StorageKind) async throws {
        try await Self.shared(kind, role: .writer) { harness, client in
            #expect(try await client.send(.put, "/v1/datasets/ann~todos", token: harness.bob).status == .ok, "the handshake reaches the existing dataset")
            #expect(try await client.send(.get, "/v1/datasets/ann%7Etodos/pull", token: harness.bob).status == .ok, "a percent-encoded ~ is the same")
            #expect(try await client.pullAll("ann~todos", token: harness.bob, limit: 10).map(\.change.record) == [ServerHarness.uri("todos", 1)])
            // The same key as the owner's first push: each member's keys are their own.
            let pushed = try await client.push("ann~todos", token: harness.bob, key: "k1", PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("todos", 2)]))
            #expect(pushed.status == .ok, "\(String(decoding: pushed.body, as: UTF8.self))")
            #expect(try await client.pullAll("todos", token: harness.ann, limit: 10).count == 2, "the owner sees the member's push")
            let schema = try await client.send(.put, "/v1/datasets/ann~todos/schema", token: harness.bob, body: try ServerHarness.schema.canonicalJSON())
            #expect(schema.status == .ok, "a registered version: nothing new")
            let members = try await client.send(.get, "/v1/datasets/ann~todos/members", token: harness.bob).decode(DatasetMembers.self)
            #expect(members == DatasetMembers(owner: "ann", members: [DatasetMember(user: "bob", role: .writer)]))
            // Bob's own dataset of the same name is another one.
            #expect(try await client.send(.put, "/v1/datasets/todos", token: harness.bob).status == .created)
        }
    }

    @Test func aReaderPullsButNeitherPushesNorRegistersNorManages() async throws {
        try await Self.shared(role: .reader) { harness, client in
            #expect(try await client.pullAll("ann~todos", token: harness.bob, limit: 10).count == 1)
            let push = try await client.push("ann~todos", token: harness.bob, key: "b", PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("todos", 2)]))
            #expect(push.status == .forbidden && push.errorCode == "role_too_low")
            let schema = try await client.send(.put, "/v1/datasets/ann~todos/schema", token: harness.bob, body: try ServerHarness.schema.canonicalJSON())
            #expect(schema.status == .forbidden && schema.errorCode == "role_too_low")
            let share = try await client.json(.put, "/v1/datasets/ann~todos/members/bob", token: harness.bob, MemberRole(role: .admin))
            #expect(share.status == .forbidden && share.errorCode == "role_too_low", "no member raises their own role")
            #expect(try await client.pullAll("todos", token: harness.ann, limit: 10).count == 1, "nothing stored changed")
        }
    }

    @Test func aUserWhoIsNoMemberIsRefusedAndAMissingDatasetIsNotFound() async throws {
        try await Self.shared(role: nil) { harness, client in
            let pull = try await client.send(.get, "/v1/datasets/ann~todos/pull", token: harness.bob)
            #expect(pull.status == .notFound && pull.errorCode == "not_shared")
            #expect(try await client.send(.put, "/v1/datasets/ann~todos", token: harness.bob).status == .notFound, "never made in another's name")
            // A dataset that is not shared with the caller answers as one that does not exist:
            // same status, code and message shape, so strangers learn nothing.
            let missing = try await client.send(.get, "/v1/datasets/ann~nothing/pull", token: harness.bob)
            let nobody = try await client.send(.get, "/v1/datasets/nobody~todos/pull", token: harness.bob)
            for reply in [missing, nobody] { #expect(reply.status == .notFound && reply.errorCode == "not_shared") }
            let message = { (reply: Reply) in (try? reply.decode(WireErrorBody.self))?.error.message ?? "" }
            #expect(message(pull).replacingOccurrences(of: "ann/todos", with: "X") == message(missing).replacingOccurrences(of: "ann/nothing", with: "X"))
            #expect(try await client.send(.get, "/v1/datasets/a~b~c/pull", token: harness.bob).status == .badRequest)
            #expect(try await client.send(.get, "/v1/datasets/ann~todos/pull", token: nil).status == .unauthorized)
        }
    }

    @Test(arguments: StorageKind.allCases)
    func aRemovedMembersNextRequestIsRefusedAndTheOwnerStaysAdmin(kind: StorageKind) async throws {
        try await Self.shared(kind, role: .admin) { harness, client in
            #expect(try await client.pullAll("ann~todos", token: harness.bob, limit: 10).count == 1)
            let owner = try await client.send(.delete, "/v1/datasets/ann~todos/members/ann", token: harness.bob)
            #expect(owner.status == .conflict && owner.errorCode == "owner_is_admin")
            let demote = try await client.json(.put, "/v1/datasets/ann~todos/members/ann", token: harness.bob, MemberRole(role: .reader))
            #expect(demote.status == .conflict)
            let unknown = try await client.json(.put, "/v1/datasets/ann~todos/members/carol", token: harness.bob, MemberRole(role: .reader))
            #expect(unknown.status == .notFound)
            // The body rules of every request: too large is 413, an unknown encoding 415.
            let huge = try await client.send(.put, "/v1/datasets/ann~todos/members/bob", token: harness.ann, body: Data(repeating: 32, count: 9 << 20))
            #expect(huge.status == .contentTooLarge && huge.errorCode == "body_too_large")
            let brotli = try await client.send(
                .put, "/v1/datasets/ann~todos/members/bob", token: harness.ann, body: try JSONEncoder().encode(MemberRole(role: .reader)),
                headers: [.contentEncoding: "br"])
            #expect(brotli.status == .unsupportedMediaType)
            let badRole = try await client.send(.put, "/v1/datasets/ann~todos/members/bob", token: harness.ann, body: Data(#"{"role":"owner"}"#.utf8))
            #expect(badRole.status == .badRequest)
            #expect(try await client.send(.delete, "/v1/datasets/todos/members/bob", token: harness.ann).status == .noContent)
            let after = try await client.send(.get, "/v1/datasets/ann~todos/pull", token: harness.bob)
            #expect(after.status == .notFound && after.errorCode == "not_shared")
            #expect(try await client.send(.delete, "/v1/datasets/todos/members/bob", token: harness.ann).status == .notFound)
        }
    }

    @Test func aMemberMayLeave() async throws {
        try await Self.shared(role: .reader) { harness, client in
            let left = try await client.send(.delete, "/v1/datasets/ann~todos/members/bob", token: harness.bob)
            #expect(left.status == .noContent)
            #expect(try await client.send(.get, "/v1/datasets/ann~todos/pull", token: harness.bob).status == .notFound)
        }
    }

    @Test func aMemberRemovedWhileItsPullWaitsGetsNothingThatArrived() async throws {
        try await Self.shared(role: .reader) { harness, client in
            let page = try await client.pull("ann~todos", token: harness.bob, limit: 10)
            async let waiting = client.send(.get, "/v1/datasets/ann~todos/pull?after=\(page.nextCursor)&limit=10&wait=240", token: harness.bob)
            try await LivePullTests.waitUntil(harness.storage.logSignals, holds: 1)
            #expect(try await client.send(.delete, "/v1/datasets/todos/members/bob", token: harness.ann).status == .noContent)
            let pushed = try await client.push("todos", token: harness.ann, key: "k2", PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("todos", 3)]))
            #expect(pushed.status == .ok)
            let answer = try await waiting
            #expect(answer.status == .notFound, "\(String(decoding: answer.body, as: UTF8.self))")
        }
    }

    @Test func aMemberRemovedWhileItsPullWaitsForNothingIsRefusedAtOnce() async throws {
        try await Self.shared(role: .reader) { harness, client in
            let page = try await client.pull("ann~todos", token: harness.bob, limit: 10)
            let started = ContinuousClock.now
            // Far apart (a wait of 240 s, answered within 120): a loaded CI machine took 10.5 s
            // to answer one of 20 s woken at once.
            async let waiting = client.send(.get, "/v1/datasets/ann~todos/pull?after=\(page.nextCursor)&limit=10&wait=240", token: harness.bob)
            try await LivePullTests.waitUntil(harness.storage.logSignals, holds: 1)
            #expect(try await client.send(.delete, "/v1/datasets/todos/members/bob", token: harness.ann).status == .noContent)
            let answer = try await waiting
            #expect(answer.status == .notFound && answer.errorCode == "not_shared")
            #expect(ContinuousClock.now - started < .seconds(120), "woken by the removal, not by the end of the wait")
        }
    }
}

import Foundation
import Testing
import TandemSchema
@testable import TandemServer
import TandemWire

/// A delete or a revival of a record settles the many-to-many links that name it, in the
/// log, so replicas (which drop a record's join rows with its delete) end with the same rows.
@Suite("Links settled by deletes and revivals")
struct LinkSettleTests {
    /// `ServerHarness.schema` with tags linking todos (the tag's side stores the links).
    static let schema: Schema = {
        var schema = ServerHarness.schema
        schema.entities.append(
            Schema.Entity(
                name: "Tag", attributes: [Schema.Attribute(name: "label", type: .scalar(.string))],
                relationships: [
                    Schema.Relationship(name: "todos", destination: "Todo", cardinality: .toMany, inverse: "tags")
                ]))
        schema.entities[0].relationships.append(Schema.Relationship(name: "tags", destination: "Tag", cardinality: .toMany, inverse: "todos"))
        return schema
    }()

    static let tag = "tandem://todos/Tag/00000000-0000-0000-0000-000000000010"
    static let todoID = "00000000-0000-0000-0000-000000000001"

    static func describe(_ entry: LogEntry) -> String {
        guard entry.change.kind.isLink, case .text(let member) = entry.change.values["todos"] else { return "\(entry.change.kind.rawValue) \(entry.change.entity)" }
        return "\(entry.change.kind.rawValue) \(entry.change.entity) \(member)"
    }

    static func link(at stamp: String) -> WireChange {
        WireChange(record: tag, entity: "Tag", kind: .link, values: ["todos": .text(todoID)], stamps: ["*": stamp])
    }

    static func setUp(_ client: ServerHarness.Client, _ harness: ServerHarness) async throws {
        try await client.setUp("todos", token: harness.ann, schema: Self.schema)
        let made = [
            WireChange(record: tag, entity: "Tag", kind: .insert, values: ["label": .text("home")], stamps: ["*": ServerHarness.stamp(1_800_000_000_000)]),
            ServerHarness.insert("todos", 1, at: ServerHarness.stamp(1_800_000_000_000)),
        ]
        #expect(try await Self.push(client, harness, "made", made).status == .ok)
    }

    /// Pushes `changes` to dataset `todos` as ann.
    static func push(_ client: ServerHarness.Client, _ harness: ServerHarness, _ key: String, _ changes: [WireChange]) async throws -> Reply {
        try await client.push("todos", token: harness.ann, key: key, PushRequest(schemaVersion: 1, changes: changes))
    }

    /// The whole log of dataset `todos`.
    static func log(_ client: ServerHarness.Client, _ harness: ServerHarness) async throws -> [LogEntry] {
        try await client.pullAll("todos", token: harness.ann, limit: 100)
    }

    /// `schema` with a unique todo title.
    static let uniqueTitles: Schema = {
        var schema = Self.schema; schema.entities[0].attributes[0].options = [.unique]; return schema
    }()

    /// The tag, and todos 1 "a" and 2 "b", pushed to `todos` (set up with ``uniqueTitles``).
    static func makeTagAndTitledTodos(_ client: ServerHarness.Client, _ harness: ServerHarness) async throws {
        let made = [
            WireChange(record: tag, entity: "Tag", kind: .insert, values: ["label": .text("home")], stamps: ["*": ServerHarness.stamp(1_800_000_000_000)]),
            ServerHarness.insert("todos", 1, title: "a", at: ServerHarness.stamp(1_800_000_000_000)),
            ServerHarness.insert("todos", 2, title: "b", at: ServerHarness.stamp(1_800_000_000_000)),
        ]
        #expect(try await Self.push(client, harness, "made", made).status == .ok)
    }

    static func delete(at stamp: String) -> WireChange {
        WireChange(record: ServerHarness.uri("todos", 1), entity: "Todo", kind: .delete, stamps: ["*": stamp])
    }

    @Test(arguments: StorageKind.allCases)
    func aDeleteNewerThanALinkLogsItsUnlinkAndTheRevivalLeavesItOut(_ kind: StorageKind) async throws {
        let harness = try await ServerHarness.make(kind)
        try await harness.run { client in
            try await Self.setUp(client, harness)
            #expect(try await Self.push(client, harness, "l", [Self.link(at: ServerHarness.stamp(1_800_000_000_001))]).status == .ok)
            let before = try await Self.log(client, harness).count
            let again = ServerHarness.insert("todos", 1, title: "again", at: ServerHarness.stamp(1_800_000_000_003))
            #expect(try await Self.push(client, harness, "d", [Self.delete(at: ServerHarness.stamp(1_800_000_000_002)), again]).status == .ok)
            let log = try await Self.log(client, harness).dropFirst(before)
            #expect(log.map(Self.describe) == ["delete Todo", "unlink Tag \(Self.todoID)", "insert Todo"])
            // Made before the delete, a link that reaches the server after it loses.
            let late = Self.link(at: ServerHarness.stamp(1_800_000_000_001, counter: 1))
            #expect(try await Self.push(client, harness, "late", [late]).status == .ok)
            #expect(try await Self.log(client, harness).count == before + 3)
        }
    }

    @Test(arguments: StorageKind.allCases)
    func aLinkNewerThanTheDeleteIsLoggedAgainAfterTheRevival(_ kind: StorageKind) async throws {
        let harness = try await ServerHarness.make(kind)
        try await harness.run { client in
            try await Self.setUp(client, harness)
            #expect(try await Self.push(client, harness, "l", [Self.link(at: ServerHarness.stamp(1_800_000_000_002))]).status == .ok)
            let before = try await Self.log(client, harness).count
            let again = ServerHarness.insert("todos", 1, title: "again", at: ServerHarness.stamp(1_800_000_000_003))
            #expect(try await Self.push(client, harness, "d", [Self.delete(at: ServerHarness.stamp(1_800_000_000_001)), again]).status == .ok)
            let log = try await Self.log(client, harness).dropFirst(before)
            #expect(log.map(Self.describe) == ["delete Todo", "insert Todo", "link Tag \(Self.todoID)"])
            #expect((log.last?.change.stamps["*"] ?? log.last?.change.stamps["todos"]) == ServerHarness.stamp(1_800_000_000_002), "logged again with its own stamp")
        }
    }

    /// The same link, delete and revival as above, the delete reaching the server first: the
    /// link is answered lost (the member is deleted, so no replica may hold it) but kept, and
    /// comes back with the record, as when it arrived first. Arrival order cannot matter.
    @Test(arguments: StorageKind.allCases)
    func aLinkNewerThanADeleteThatArrivedFirstComesBackWithTheRevival(_ kind: StorageKind) async throws {
        let harness = try await ServerHarness.make(kind)
        try await harness.run { client in
            try await Self.setUp(client, harness)
            let before = try await Self.log(client, harness).count
            #expect(try await Self.push(client, harness, "d", [Self.delete(at: ServerHarness.stamp(1_800_000_000_001))]).status == .ok)
            let reply = try await Self.push(client, harness, "l", [Self.link(at: ServerHarness.stamp(1_800_000_000_002))])
            #expect(reply.status == .ok)
            #expect(try reply.decode(PushResponse.self).outcomes.first?.lost.first?.toDelete == true, "the member is deleted now: its maker drops the link")
            let again = ServerHarness.insert("todos", 1, title: "again", at: ServerHarness.stamp(1_800_000_000_003))
            #expect(try await Self.push(client, harness, "r", [again]).status == .ok)
            let log = try await Self.log(client, harness).dropFirst(before)
            #expect(log.map(Self.describe) == ["delete Todo", "insert Todo", "link Tag \(Self.todoID)"])
        }
    }

    /// A link older than its owner's newest delete never comes back with a revival: every
    /// replica dropped it with the delete.
    @Test(arguments: StorageKind.allCases)
    func aLinkOlderThanItsOwnersDeleteStaysOutAfterTheRevival(_ kind: StorageKind) async throws {
        let harness = try await ServerHarness.make(kind)
        try await harness.run { client in
            try await Self.setUp(client, harness)
            #expect(try await Self.push(client, harness, "l", [Self.link(at: ServerHarness.stamp(1_800_000_000_001))]).status == .ok)
            // The tag deleted (the owner), its link older than the delete; then the tag
            // comes back: its link does not.
            let before = try await Self.log(client, harness).count
            let deleteTag = WireChange(record: Self.tag, entity: "Tag", kind: .delete, stamps: ["*": ServerHarness.stamp(1_800_000_000_002)])
            let tagAgain = WireChange(record: Self.tag, entity: "Tag", kind: .insert, values: ["label": .text("home")], stamps: ["*": ServerHarness.stamp(1_800_000_000_003)])
            #expect(try await Self.push(client, harness, "d", [deleteTag, tagAgain]).status == .ok)
            let log = try await Self.log(client, harness).dropFirst(before)
            #expect(!log.contains { $0.change.kind == .link }, "\(log.map(Self.describe))")
        }
    }

    /// A link to a record merged away (replicas moved it to the survivor with the merge) is
    /// not logged again when the merged-away record is made again by a newer insert; it is
    /// unlinked after the insert instead, for a replica that kept its own record with that id
    /// (newer than the merge) and so never moved the link.
    @Test(arguments: StorageKind.allCases)
    func aLinkToAMergedAwayRecordStaysOutWhenItIsMadeAgain(_ kind: StorageKind) async throws {
        let harness = try await ServerHarness.make(kind)
        try await harness.run { client in
            try await client.setUp("todos", token: harness.ann, schema: Self.uniqueTitles)
            let two = ServerHarness.uri("todos", 2)
            let twoID = String(two.split(separator: "/").last!)
            try await Self.makeTagAndTitledTodos(client, harness)
            let link = WireChange(record: Self.tag, entity: "Tag", kind: .link, values: ["todos": .text(twoID)], stamps: ["*": ServerHarness.stamp(1_800_000_000_001)])
            #expect(try await Self.push(client, harness, "l", [link]).status == .ok)
            // Todo 2 takes todo 1's title: merged into todo 1 (the smaller id survives).
            let collide = WireChange(record: two, entity: "Todo", kind: .update, values: ["title": .text("a")], stamps: ["title": ServerHarness.stamp(1_800_000_000_002)])
            #expect(try await Self.push(client, harness, "c", [collide]).status == .ok)
            let before = try await Self.log(client, harness).count
            let again = ServerHarness.insert("todos", 2, title: "c", at: ServerHarness.stamp(1_800_000_000_500))
            #expect(try await Self.push(client, harness, "r", [again]).status == .ok)
            let log = try await Self.log(client, harness).dropFirst(before)
            #expect(log.map(Self.describe) == ["insert Todo", "unlink Tag \(twoID)"])
        }
    }
}

extension LinkSettleTests {
    /// A link to a merged-away record, made before its maker heard of the merge, that reaches
    /// the server after the id was made again: the replica that made it moved it to the
    /// survivor when it applied the merge, so the server does too; a link made after the
    /// re-making is the new record's.
    @Test(arguments: StorageKind.allCases)
    func aLinkToAMergedAwayMemberMadeBeforeItWasMadeAgainGoesToTheSurvivor(_ kind: StorageKind) async throws {
        let harness = try await ServerHarness.make(kind)
        try await harness.run { client in
            try await client.setUp("todos", token: harness.ann, schema: Self.uniqueTitles)
            let two = ServerHarness.uri("todos", 2)
            let twoID = String(two.split(separator: "/").last!)
            try await Self.makeTagAndTitledTodos(client, harness)
            let collide = WireChange(record: two, entity: "Todo", kind: .update, values: ["title": .text("a")], stamps: ["title": ServerHarness.stamp(1_800_000_000_002)])
            #expect(try await Self.push(client, harness, "c", [collide]).status == .ok)
            let again = ServerHarness.insert("todos", 2, title: "c", at: ServerHarness.stamp(1_800_000_000_500))
            #expect(try await Self.push(client, harness, "r", [again]).status == .ok)
            let before = try await Self.log(client, harness).count
            let stale = WireChange(record: Self.tag, entity: "Tag", kind: .link, values: ["todos": .text(twoID)], stamps: ["*": ServerHarness.stamp(1_800_000_000_300)])
            let fresh = WireChange(record: Self.tag, entity: "Tag", kind: .link, values: ["todos": .text(twoID)], stamps: ["*": ServerHarness.stamp(1_800_000_000_600)])
            #expect(try await Self.push(client, harness, "s", [stale]).status == .ok)
            #expect(try await Self.push(client, harness, "f", [fresh]).status == .ok)
            let log = try await Self.log(client, harness).dropFirst(before)
            #expect(log.map(Self.describe) == ["link Tag \(Self.todoID)", "link Tag \(twoID)"])
        }
    }

    /// The same with the link's owner merged away and made again.
    @Test(arguments: StorageKind.allCases)
    func aLinkOfAMergedAwayOwnerMadeBeforeItWasMadeAgainGoesToTheSurvivor(_ kind: StorageKind) async throws {
        let harness = try await ServerHarness.make(kind)
        let schema = {
            var schema = Self.schema; schema.entities[1].attributes[0].options = [.unique]; return schema
        }()
        try await harness.run { client in
            try await client.setUp("todos", token: harness.ann, schema: schema)
            let survivor = "tandem://todos/Tag/00000000-0000-0000-0000-000000000009"
            let made = [
                WireChange(record: Self.tag, entity: "Tag", kind: .insert, values: ["label": .text("home")], stamps: ["*": ServerHarness.stamp(1_800_000_000_000)]),
                ServerHarness.insert("todos", 1, at: ServerHarness.stamp(1_800_000_000_000)),
            ]
            #expect(try await Self.push(client, harness, "made", made).status == .ok)
            let collide = WireChange(record: survivor, entity: "Tag", kind: .insert, values: ["label": .text("home")], stamps: ["*": ServerHarness.stamp(1_800_000_000_002)])
            #expect(try await Self.push(client, harness, "c", [collide]).status == .ok)
            let again = WireChange(record: Self.tag, entity: "Tag", kind: .insert, values: ["label": .text("work")], stamps: ["*": ServerHarness.stamp(1_800_000_000_500)])
            #expect(try await Self.push(client, harness, "r", [again]).status == .ok)
            let before = try await Self.log(client, harness).count
            #expect(try await Self.push(client, harness, "s", [Self.link(at: ServerHarness.stamp(1_800_000_000_300))]).status == .ok)
            #expect(try await Self.push(client, harness, "f", [Self.link(at: ServerHarness.stamp(1_800_000_000_600))]).status == .ok)
            let log = try await Self.log(client, harness).dropFirst(before)
            #expect(log.map { "\($0.change.kind.rawValue) \($0.change.record)" } == ["link \(survivor)", "link \(Self.tag)"])
        }
    }
}

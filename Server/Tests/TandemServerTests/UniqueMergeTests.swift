import Foundation
import Testing
import TandemSchema
@testable import TandemServer
import TandemWire

/// The server decides unique-value merges, in log order, and logs each decision for the
/// replicas to follow.
@Suite("Unique-value merges on the server")
struct UniqueMergeTests {
    /// `ServerHarness.schema` with `Todo.title` unique.
    static let schema: Schema = {
        var schema = ServerHarness.schema
        schema.entities[0].attributes[0].options = [.unique]
        return schema
    }()

    static func insert(_ n: Int, title: String, name: String, at stamp: String) -> WireChange {
        WireChange(
            record: ServerHarness.uri("todos", n), entity: "Todo", kind: .insert,
            values: ["title": .text(title), "people.name": .text(name), "people.age": .integer(31)], stamps: ["*": stamp])
    }

    static func update(_ n: Int, _ values: [String: WireValue], at stamp: String) -> WireChange {
        WireChange(record: ServerHarness.uri("todos", n), entity: "Todo", kind: .update, values: values, stamps: ["*": stamp])
    }

    static func json(_ value: WireValue) -> String {
        var json = WireJSON()
        json.append(value)
        return json.text
    }

    static func describe(_ entry: LogEntry) -> String {
        let id = entry.change.record.suffix(1)
        let values = entry.change.values.sorted { $0.key < $1.key }.map { "\($0.key)=\(Self.json($0.value))" }.joined(separator: ",")
        let merged = entry.change.mergedInto.map { " into " + $0.suffix(1) } ?? ""
        return "\(entry.change.kind.rawValue) \(id)\(values.isEmpty ? "" : " " + values)\(merged)"
    }

    @Test(arguments: StorageKind.allCases)
    func twoRecordsHoldingOneUniqueValueMergeIntoTheSmallerIdWithTheLosersNewerValues(_ kind: StorageKind) async throws {
        let harness = try await ServerHarness.make(kind)
        try await harness.run { client in
            try await client.setUp("todos", token: harness.ann, schema: Self.schema)
            let (older, newer) = (ServerHarness.stamp(1_800_000_000_000), ServerHarness.stamp(1_800_000_000_005))
            #expect(try await client.push("todos", token: harness.ann, key: "a", PushRequest(schemaVersion: 1, changes: [Self.insert(2, title: "x", name: "Bob", at: newer)])).status == .ok)
            let second = try await client.push("todos", token: harness.ann, key: "b", PushRequest(schemaVersion: 1, changes: [Self.insert(1, title: "x", name: "Ann", at: older)]))
            #expect(second.status == .ok)
            #expect(try second.decode(PushResponse.self).echo == nil, "the log holds more than the push sent")
            let log = try await client.pullAll("todos", token: harness.ann, limit: 100)
            #expect(
                log.map(Self.describe) == [
                    "insert 2 people.age=31,people.name=\"Bob\",title=\"x\"",
                    "insert 1 people.age=31,people.name=\"Ann\",title=\"x\"",
                    "update 1 people.name=\"Bob\"",  // the loser's newer value, with its own stamp
                    "delete 2 into 1",
                ])
            #expect(log[2].change.stamps["people.name"] ?? log[2].change.stamps["*"] == newer)
            let delete = try #require(log.last.flatMap { HLCTimestamp($0.change.stamps["*"] ?? "") })
            #expect(delete > HLCTimestamp(newer)!, "the merge's delete is newer than everything the loser held")
            // The value is the survivor's now: a third record taking it merges into record 1.
            #expect(try await client.push("todos", token: harness.ann, key: "c", PushRequest(schemaVersion: 1, changes: [Self.insert(3, title: "x", name: "Cy", at: older)])).status == .ok)
            let after = try await client.pullAll("todos", token: harness.ann, limit: 100).dropFirst(log.count)
            #expect(after.map(Self.describe) == ["insert 3 people.age=31,people.name=\"Cy\",title=\"x\"", "delete 3 into 1"])
        }
    }

    @Test(arguments: StorageKind.allCases)
    func anEditOfTheLoserGoesToTheSurvivorUnlessItFreesTheValue(_ kind: StorageKind) async throws {
        let harness = try await ServerHarness.make(kind)
        try await harness.run { client in
            try await client.setUp("todos", token: harness.ann, schema: Self.schema)
            let stamp = ServerHarness.stamp(1_800_000_000_000)
            let merge = [Self.insert(1, title: "x", name: "Ann", at: stamp), Self.insert(2, title: "x", name: "Ann", at: stamp)]
            #expect(try await client.push("todos", token: harness.ann, key: "a", PushRequest(schemaVersion: 1, changes: merge)).status == .ok)
            let merged = try await client.pullAll("todos", token: harness.ann, limit: 100).count
            // Made before its maker heard of the merge: it edits the one record there is now.
            let edit = Self.update(2, ["rank": .integer(5)], at: ServerHarness.stamp(1_800_000_000_001))
            #expect(try await client.push("todos", token: harness.ann, key: "b", PushRequest(schemaVersion: 1, changes: [edit])).status == .ok)
            // A rename away from the shared value frees it: record 2 lives again, renamed.
            let rename = Self.update(2, ["title": .text("y")], at: ServerHarness.stamp(1_800_000_000_002))
            #expect(try await client.push("todos", token: harness.ann, key: "c", PushRequest(schemaVersion: 1, changes: [rename])).status == .ok)
            let log = try await client.pullAll("todos", token: harness.ann, limit: 100).dropFirst(merged)
            #expect(log.map(Self.describe) == ["update 1 rank=5", "insert 2 people.age=31,people.name=\"Ann\",title=\"y\""])
            let revived = try #require(log.last.flatMap { HLCTimestamp($0.change.stamps["*"] ?? "") })
            let mergeStamp = try #require(try await client.pullAll("todos", token: harness.ann, limit: 100)[merged - 1].change.stamps["*"].flatMap { HLCTimestamp($0) })
            #expect(revived > mergeStamp, "replicas that applied the merge take it as a re-insert")
            // Its new value is held: another record taking it merges with it.
            #expect(try await client.push("todos", token: harness.ann, key: "d", PushRequest(schemaVersion: 1, changes: [Self.insert(3, title: "y", name: "Cy", at: stamp)])).status == .ok)
            #expect(try await client.pullAll("todos", token: harness.ann, limit: 100).last.map(Self.describe) == "delete 3 into 2")
        }
    }

    @Test(arguments: StorageKind.allCases)
    func aBulkPushClaimsEveryValueAndMergesOnlyTheOneTakenElsewhere(_ kind: StorageKind) async throws {
        let harness = try await ServerHarness.make(kind)
        try await harness.run { client in
            try await client.setUp("todos", token: harness.ann, schema: Self.schema)
            let stamp = ServerHarness.stamp(1_800_000_000_000)
            #expect(try await client.push("todos", token: harness.ann, key: "a", PushRequest(schemaVersion: 1, changes: [Self.insert(9_000, title: "t520", name: "Ann", at: stamp)])).status == .ok)
            // More records than one claiming statement holds; one value is taken already.
            let bulk = (1...600).map { Self.insert($0, title: "t\($0)", name: "Bob", at: stamp) }
            #expect(try await client.push("todos", token: harness.ann, key: "b", PushRequest(schemaVersion: 1, changes: bulk)).status == .ok)
            let log = try await client.pullAll("todos", token: harness.ann, limit: 5_000)
            let merges = { (entries: ArraySlice<LogEntry>) in
                entries.compactMap { entry in entry.change.mergedInto.map { "\(Int(entry.change.record.suffix(12))!) into \(Int($0.suffix(12))!)" } }
            }
            #expect(merges(log[...]) == ["9000 into 520"])
            // Every other value is held: records taking the first and the last merge too.
            let late = [Self.insert(7_001, title: "t1", name: "Cy", at: stamp), Self.insert(7_600, title: "t600", name: "Cy", at: stamp)]
            #expect(try await client.push("todos", token: harness.ann, key: "c", PushRequest(schemaVersion: 1, changes: late)).status == .ok)
            let after = try await client.pullAll("todos", token: harness.ann, limit: 5_000).dropFirst(log.count)
            #expect(merges(after) == ["7001 into 1", "7600 into 600"])
        }
    }

    @Test(arguments: StorageKind.allCases)
    func aClientCannotSendAMerge(_ kind: StorageKind) async throws {
        let harness = try await ServerHarness.make(kind)
        try await harness.run { client in
            try await client.setUp("todos", token: harness.ann, schema: Self.schema)
            let delete = WireChange(
                record: ServerHarness.uri("todos", 2), entity: "Todo", kind: .delete, stamps: ["*": ServerHarness.stamp()],
                mergedInto: ServerHarness.uri("todos", 1))
            let answer = try await client.push("todos", token: harness.ann, key: "a", PushRequest(schemaVersion: 1, changes: [delete]))
            #expect(answer.status == .unprocessableContent)
            #expect(String(decoding: answer.body, as: UTF8.self).contains("mergedInto is written by the server"))
        }
    }
}

extension UniqueMergeTests {
    /// Todos in projects with a unique name.
    static let projects = Schema(entities: [
        Schema.Entity(
            name: "Todo", attributes: [Schema.Attribute(name: "title", type: .scalar(.string))],
            relationships: [Schema.Relationship(name: "project", destination: "Project", cardinality: .toOne, inverse: nil)]),
        Schema.Entity(name: "Project", attributes: [Schema.Attribute(name: "name", type: .scalar(.string), options: [.unique])]),
    ])

    static func project(_ n: Int, _ name: String, at stamp: String) -> WireChange {
        WireChange(
            record: "tandem://todos/Project/" + String(format: "00000000-0000-0000-0000-%012d", n), entity: "Project", kind: .insert,
            values: ["name": .text(name)], stamps: ["*": stamp])
    }

    static func todo(_ kind: WireChange.Kind, project: Int?, at stamp: String) -> WireChange {
        WireChange(
            record: ServerHarness.uri("todos", 7), entity: "Todo", kind: kind,
            values: kind == .delete ? [:] : ["title": .text("t"), "project": project.map { .text(String(format: "00000000-0000-0000-0000-%012d", $0)) } ?? .null],
            stamps: ["*": stamp])
    }

    @Test(arguments: StorageKind.allCases)
    func aReferenceToAMergedAwayRecordGoesToTheSurvivorOnlyOnALiveRecord(_ kind: StorageKind) async throws {
        let harness = try await ServerHarness.make(kind)
        try await harness.run { client in
            try await client.setUp("todos", token: harness.ann, schema: Self.projects)
            // Stamps a minute old: the server stamps its rewrites with its own (later) time.
            let start = UInt64(Date().timeIntervalSince1970 * 1000) - 60_000
            let t = { (ms: UInt64) in ServerHarness.stamp(start + ms) }
            // 200 is merged into 100.
            #expect(
                try await client.push("todos", token: harness.ann, key: "p", PushRequest(schemaVersion: 1, changes: [Self.project(100, "x", at: t(0)), Self.project(200, "x", at: t(1))])).status == .ok
            )
            let merged = try await client.pullAll("todos", token: harness.ann, limit: 100).count
            // Todo 7 made and deleted; then an older insert of it naming 200 arrives.
            #expect(try await client.push("todos", token: harness.ann, key: "t", PushRequest(schemaVersion: 1, changes: [Self.todo(.insert, project: nil, at: t(20))])).status == .ok)
            #expect(try await client.push("todos", token: harness.ann, key: "d", PushRequest(schemaVersion: 1, changes: [Self.todo(.delete, project: nil, at: t(30))])).status == .ok)
            #expect(try await client.push("todos", token: harness.ann, key: "o", PushRequest(schemaVersion: 1, changes: [Self.todo(.insert, project: 200, at: t(10))])).status == .ok)
            let afterDelete = try await client.pullAll("todos", token: harness.ann, limit: 100).dropFirst(merged)
            #expect(afterDelete.map(Self.describe) == ["insert 7 project=null,title=\"t\"", "delete 7"], "the older insert stays lost to the delete")
            // A newer insert naming 200 brings todo 7 back, then points it at 100.
            #expect(try await client.push("todos", token: harness.ann, key: "n", PushRequest(schemaVersion: 1, changes: [Self.todo(.insert, project: 200, at: t(40))])).status == .ok)
            let back = try await client.pullAll("todos", token: harness.ann, limit: 100).dropFirst(merged + 2)
            #expect(back.map(Self.describe) == ["insert 7 project=\"00000000-0000-0000-0000-000000000200\",title=\"t\"", "update 7 project=\"00000000-0000-0000-0000-000000000100\""])
        }
    }
}

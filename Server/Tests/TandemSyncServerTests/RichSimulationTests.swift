import Foundation
import GRDB
import Hummingbird
import HummingbirdTesting
import Logging
import NIOConcurrencyHelpers
import Testing
import Tandem
import TandemSchema
import TandemServer
@testable import TandemSync
import TandemWire
import TandemSyncTestSupport

/// The hard histories: three replicas with lying clocks (seconds to a day ahead or behind,
/// and jumping back after running ahead), projects whose unique names collide on insert and
/// on rename and are freed and taken again, composite leaves edited concurrently, and
/// many-to-many links, over a fault-injecting transport. After everyone syncs, every replica
/// and a fresh one hold the same records and links, and every value a replica wrote last is
/// on them, or in a conflict log, or was overwritten or deleted later.
@Suite("Convergence simulation: clocks, unique values, composites, links", .serialized)
struct RichSimulationTests {
    /// Histories per run: a third of `TANDEM_SIM_HISTORIES` (default 300), at least 40.
    static let histories = max(ConvergenceSimulationTests.histories / 3, 40)
    /// The first history's number (`TANDEM_SIM_FIRST`, default 1): a soak can run histories
    /// no earlier run has.
    static let first = ProcessInfo.processInfo.environment["TANDEM_SIM_FIRST"].flatMap(UInt64.init) ?? 1

    static let schema: Schema = {
        var schema = ManyToManySyncTests.schema
        schema.entities[0].attributes.append(
            Schema.Attribute(
                name: "people",
                type: .composite(
                    .init(
                        typeName: "People",
                        fields: [
                            .init(name: "name", type: .scalar(.string)), .init(name: "age", type: .scalar(.int)),
                        ]))))
        schema.entities[1].attributes[0].options = [.unique]
        // Tags too: the owners of links are merged, deleted and made again with the same id.
        schema.entities[schema.entities.firstIndex { $0.name == "Tag" }!].attributes[0].options = [.unique]
        return schema
    }()

    /// A replica's clock: the real one moved by an offset the history changes.
    final class SkewedClock: Sendable {
        let offset = NIOLockedValueBox<Double>(0)
        var clock: WallClock { WallClock { [self] in Date().addingTimeInterval(self.offset.withLockedValue { $0 }) } }
    }

    /// One write a replica made: what the oracle checks at the end.
    struct Write {
        var step: Int
        var replica: Int
        var record: String  // "Todo/<id>"
        var column: String
        var json: String
    }

    static func state(_ store: ModelContainer) throws -> [String] {
        try store.read { db in
            try Row.fetchAll(db, sql: ##"SELECT "#id", title, rank, "people.name", "people.age", project FROM Todo ORDER BY "#id""##).map { row in
                "todo \(row[0] as String) " + (1..<6).map { WireValue(row[$0] as DatabaseValue).jsonText }.joined(separator: " ")
            }
                + Row.fetchAll(db, sql: ##"SELECT "#id", name FROM Project ORDER BY "#id""##).map { "project \($0[0] as String) \($0[1] as String)" }
                + Row.fetchAll(db, sql: ##"SELECT "#id", label FROM Tag ORDER BY "#id""##).map { "tag \($0[0] as String) \($0[1] as String)" }
                + Row.fetchAll(db, sql: #"SELECT source, target FROM "Tag.todos" ORDER BY source, target"#).map { "link \($0[0] as String)>\($0[1] as String)" }
        }
    }

    /// The value of `column` of `record` ("Entity/id") in `store`, as wire JSON; `nil` when the record is not there.
    static func value(_ store: ModelContainer, _ record: String, _ column: String) throws -> String? {
        let parts = record.split(separator: "/").map(String.init)
        return try store.read { db in
            try Row.fetchOne(db, sql: "SELECT \(SQLName.quote(column)) FROM \(SQLName.quote(parts[0])) WHERE \"#id\" = ?", arguments: [parts[1]])
                .map { WireValue($0[0] as DatabaseValue).jsonText }
        }
    }

    /// Deletes todos as a model save does: the records and their links, in one transaction.
    static func deleteTodos(_ store: ModelContainer, _ condition: String, _ argument: String) throws {
        try store.write(author: "app") { db in
            try db.execute(sql: ##"DELETE FROM "Tag.todos" WHERE target IN (SELECT "#id" FROM Todo "## + condition + ")", arguments: [argument])
            try db.execute(sql: "DELETE FROM Todo " + condition, arguments: [argument])
        }
    }

    enum Plant { case none, noClockRepair }

    static func history(seed: UInt64, client: any TestClientProtocol, token: String, planted: Plant) async throws -> String? {
        var random = SplitMix64(seed: seed)
        func pick(_ count: Int) -> Int { Int(random.next() % UInt64(count)) }
        let dataset = "rich-\(seed)"
        let base = ConvergenceSimulationTests.transport(client)
        let clocks = (0..<3).map { _ in SkewedClock() }
        let replicas = try clocks.map { clock in
            var configuration = ModelConfiguration(isStoredInMemoryOnly: true, dataset: dataset)
            configuration.clock = clock.clock
            return try ModelContainer(schema: schema, configuration: configuration)
        }
        let transports = (0..<3).map {
            FaultyTransport(
                wrapping: base, seed: seed &+ UInt64($0) &* 7919,
                faults: .init(drop: 0.05, cutAfterCommit: 0.05, duplicate: 0.05, delay: 0.05, maxDelay: .milliseconds(2)))
        }
        let quiet = Logger(label: "sim", factory: { _ in SwiftLogNoOpLogHandler() })
        let engines = (0..<3).map { SyncEngine(container: replicas[$0], transport: transports[$0], configuration: SyncConfiguration(token: { token }), logger: quiet) }
        if planted == .noClockRepair { for engine in engines { await engine.plantNoClockRepair() } }
        // Two tags everyone has.
        for tag in [200, 201] { try ManyToManySyncTests.tag(replicas[0], tag, "tag \(tag)") }
        var log: [String] = []
        var writes: [Write] = []
        var deletes: [(step: Int, record: String)] = []
        var projectDeletes: [Int] = []
        let offsets: [Double] = [0, 0, 3, -30, 400, 86_400, -86_400, 0.5]
        let names = ["a", "b", "c"]
        func sync(_ r: Int) async {
            do { _ = try await engines[r].sync(); log.append("r\(r) sync") } catch { log.append("r\(r) sync failed (\(error))") }
        }
        for step in 0..<45 {
            let r = pick(3)
            let store = replicas[r]
            let n = 1 + pick(4)
            let todo = "Todo/\(SyncFixtures.id(n))"
            let exists = try store.read { db in try Bool.fetchOne(db, sql: ##"SELECT 1 FROM Todo WHERE "#id" = ?"##, arguments: [SyncFixtures.id(n)]) ?? false }
            let p = 100 + pick(3)
            let project = "Project/\(SyncFixtures.id(p))"
            let projectExists = try store.read { db in try Bool.fetchOne(db, sql: ##"SELECT 1 FROM Project WHERE "#id" = ?"##, arguments: [SyncFixtures.id(p)]) ?? false }
            func write(_ record: String, _ column: String, _ value: WireValue) { writes.append(Write(step: step, replica: r, record: record, column: column, json: value.jsonText)) }
            func nameFree(_ name: String) throws -> Bool {
                try store.read { db in try Bool.fetchOne(db, sql: "SELECT 1 FROM Project WHERE name = ?", arguments: [name]) == nil }
            }
            switch pick(18) {
            case 0:
                if !exists {
                    try store.write(author: "app") { db in
                        try db.execute(
                            sql: ##"INSERT INTO Todo ("#id", title, rank, "people.name", "people.age") VALUES (?, ?, ?, ?, ?)"##,
                            arguments: [SyncFixtures.id(n), "t\(step)", step, "n\(step)", step])
                    }
                    // An insert writes every column: the project too (none).
                    for (column, value) in [
                        ("title", WireValue.text("t\(step)")), ("rank", .integer(Int64(step))), ("people.name", .text("n\(step)")), ("people.age", .integer(Int64(step))), ("project", .null),
                    ] {
                        write(todo, column, value)
                    }
                    log.append("r\(r) insert \(n)")
                }
            case 1, 2:
                if exists {
                    let column = ["title", "rank", "people.name", "people.age"][pick(4)]
                    let value: WireValue = column == "title" || column == "people.name" ? .text("\(column.prefix(1))\(step)") : .integer(Int64(step))
                    try store.write(author: "app") { db in
                        try db.execute(sql: ##"UPDATE Todo SET "\##(column)" = ? WHERE "#id" = ?"##, arguments: [value.databaseValue, SyncFixtures.id(n)])
                    }
                    write(todo, column, value)
                    log.append("r\(r) \(column) \(n)=\(value)")
                }
            case 3:
                if exists { try Self.deleteTodos(store, ##"WHERE "#id" = ?"##, SyncFixtures.id(n)); deletes.append((step, todo)); log.append("r\(r) delete \(n)") }
            case 4:
                // Unique names collide across replicas: a name this replica has free.
                let name = names[pick(names.count)]
                if !projectExists, try nameFree(name) {
                    try SyncFixtures.insertProject(store, p, name: name)
                    write(project, "name", .text(name))
                    log.append("r\(r) insert project \(p) '\(name)'")
                }
            case 5:
                // A rename: frees one name, takes another (perhaps taken elsewhere).
                let name = names[pick(names.count)] + (pick(2) == 0 ? "" : "\(step)")
                if projectExists, try nameFree(name) {
                    try UniqueValueReplicaTests.rename(store, p, name)
                    write(project, "name", .text(name))
                    log.append("r\(r) rename project \(p) '\(name)'")
                }
            case 6:
                if exists {
                    let target = projectExists ? p : nil
                    let current = try Self.value(store, todo, "project")
                    try SyncFixtures.move(store, n, to: target)
                    // Setting the value it holds is no edit (the journal writes nothing).
                    let value: WireValue = target.map { .text(SyncFixtures.id($0)) } ?? .null
                    if current != value.jsonText { write(todo, "project", value) }
                    log.append("r\(r) move \(n) to \(target.map(String.init) ?? "none")")
                }
            case 7:
                if projectExists {
                    // As a model save deletes: the project, then its todos (cascade) with their links.
                    try store.write(author: "app") { db in
                        try db.execute(sql: ##"DELETE FROM Project WHERE "#id" = ?"##, arguments: [SyncFixtures.id(p)])
                        try db.execute(sql: ##"DELETE FROM "Tag.todos" WHERE target IN (SELECT "#id" FROM Todo WHERE project = ?)"##, arguments: [SyncFixtures.id(p)])
                        try db.execute(sql: "DELETE FROM Todo WHERE project = ?", arguments: [SyncFixtures.id(p)])
                    }
                    projectDeletes.append(step); deletes.append((step, project)); log.append("r\(r) delete project \(p)")
                }
            case 8:
                let tag = 200 + pick(3)
                let tagExists = try store.read { db in try Bool.fetchOne(db, sql: ##"SELECT 1 FROM Tag WHERE "#id" = ?"##, arguments: [SyncFixtures.id(tag)]) ?? false }
                if exists, tagExists {
                    let linked = try store.read { db in
                        try Bool.fetchOne(db, sql: #"SELECT 1 FROM "Tag.todos" WHERE source = ? AND target = ?"#, arguments: [SyncFixtures.id(tag), SyncFixtures.id(n)]) ?? false
                    }
                    try ManyToManySyncTests.link(store, tag: tag, todo: n, !linked)
                    log.append("r\(r) \(linked ? "unlink" : "link") tag \(tag) todo \(n)")
                }
            case 9:
                // The clock moves: ahead, behind, or back to the truth after running ahead.
                let offset = offsets[pick(offsets.count)]
                clocks[r].offset.withLockedValue { $0 = offset }
                log.append("r\(r) clock \(offset) s")
            case 10:
                // Two projects swap their names in one save (through a third name): a swap,
                // never a collision.
                let other = 100 + pick(3)
                let names = try store.read { db in
                    try [p, other].map { try String.fetchOne(db, sql: ##"SELECT name FROM Project WHERE "#id" = ?"##, arguments: [SyncFixtures.id($0)]) }
                }
                if other != p, let mine = names[0], let theirs = names[1] {
                    try store.write(author: "app") { db in
                        try db.execute(sql: ##"UPDATE Project SET name = ? WHERE "#id" = ?"##, arguments: ["swap\(step)", SyncFixtures.id(p)])
                        try db.execute(sql: ##"UPDATE Project SET name = ? WHERE "#id" = ?"##, arguments: [mine, SyncFixtures.id(other)])
                        try db.execute(sql: ##"UPDATE Project SET name = ? WHERE "#id" = ?"##, arguments: [theirs, SyncFixtures.id(p)])
                    }
                    write(project, "name", .text(theirs))
                    write("Project/\(SyncFixtures.id(other))", "name", .text(mine))
                    log.append("r\(r) swap names of projects \(p) '\(mine)' and \(other) '\(theirs)'")
                }
            case 11:
                // A tag (re-)made with a label from a small pool: labels collide, so tags are
                // merged, and an id merged away or deleted is made again, links and all.
                let tag = 200 + pick(3)
                let label = ["x", "y"][pick(2)]
                let free = try store.read { db in
                    try Bool.fetchOne(db, sql: ##"SELECT 1 FROM Tag WHERE "#id" = ? OR label = ?"##, arguments: [SyncFixtures.id(tag), label]) == nil
                }
                if free {
                    try ManyToManySyncTests.tag(store, tag, label)
                    write("Tag/\(SyncFixtures.id(tag))", "label", .text(label))
                    log.append("r\(r) insert tag \(tag) '\(label)'")
                    if exists { try ManyToManySyncTests.link(store, tag: tag, todo: n); log.append("r\(r) link tag \(tag) todo \(n)") }
                }
            case 13:
                // A value the server refuses (text in the integer rank): on a new todo, tagged
                // in the same save, or on one that exists. It waits in the quarantine, its
                // links with it, until a later edit fixes it (before the end, at the latest).
                if exists {
                    try SyncFixtures.update(store, n, "rank", "bad\(step)")
                    log.append("r\(r) refused rank \(n)")
                } else {
                    try store.write(author: "app") { db in
                        try db.execute(
                            sql: ##"INSERT INTO Todo ("#id", title, rank, "people.name", "people.age") VALUES (?, ?, ?, ?, ?)"##,
                            arguments: [SyncFixtures.id(n), "t\(step)", "bad\(step)", "n\(step)", step])
                    }
                    for (column, value) in [("title", WireValue.text("t\(step)")), ("people.name", .text("n\(step)")), ("people.age", .integer(Int64(step))), ("project", .null)] {
                        write(todo, column, value)
                    }
                    let tag = 200 + pick(3)
                    let tagExists = try store.read { db in try Bool.fetchOne(db, sql: ##"SELECT 1 FROM Tag WHERE "#id" = ?"##, arguments: [SyncFixtures.id(tag)]) ?? false }
                    if tagExists { try ManyToManySyncTests.link(store, tag: tag, todo: n) }
                    log.append("r\(r) insert \(n) with a refused rank\(tagExists ? ", tagged \(tag)" : "")")
                }
            case 12:
                // A tag deleted as a model save deletes it: with its links.
                let tag = 200 + pick(3)
                let deleted = try store.write(author: "app") { db in
                    try db.execute(sql: #"DELETE FROM "Tag.todos" WHERE source = ?"#, arguments: [SyncFixtures.id(tag)])
                    try db.execute(sql: ##"DELETE FROM Tag WHERE "#id" = ?"##, arguments: [SyncFixtures.id(tag)])
                    return db.changesCount > 0
                }
                if deleted { deletes.append((step, "Tag/\(SyncFixtures.id(tag))")); log.append("r\(r) delete tag \(tag)") }
            default:
                await sync(r)
            }
        }
        for transport in transports { transport.isEnabled = false }
        // Every refused rank fixed by a later edit, as a user would: what waited goes.
        for (r, store) in replicas.enumerated() {
            let broken = try store.read { db in try String.fetchAll(db, sql: ##"SELECT "#id" FROM Todo WHERE typeof(rank) = 'text'"##) }
            for id in broken {
                try store.write(author: "app") { db in try db.execute(sql: ##"UPDATE Todo SET rank = 1000 WHERE "#id" = ?"##, arguments: [id]) }
                writes.append(Write(step: 1000, replica: r, record: "Todo/\(id)", column: "rank", json: "1000"))
                log.append("r\(r) fixes rank of \(id.suffix(2))")
            }
        }
        for clock in clocks { clock.offset.withLockedValue { $0 = 0 } }
        for _ in 0..<3 { for r in 0..<3 { await sync(r) } }
        let fresh = try SyncFixtures.memoryStore(dataset, schema: schema)
        _ = try? await SyncEngine(container: fresh, transport: base, configuration: SyncConfiguration(token: { token }), logger: quiet).sync()
        let all = replicas + [fresh]
        let states = try all.map(Self.state)
        var problems: [String] = []
        if !states.allSatisfy({ $0 == states[0] }) {
            problems.append("diverged:\n" + states.enumerated().map { "  replica \($0.offset): \($0.element)" }.joined(separator: "\n"))
        }
        let dangling = try all.flatMap(SyncFixtures.dangling)
        if !dangling.isEmpty { problems.append("todos pointing at no project: \(dangling)") }
        // Every value a replica wrote last: on the replicas, in a conflict log, or overwritten
        // or deleted later (by anyone).
        let conflicts = try replicas.flatMap { try SyncStatus.conflicts(of: $0, limit: 100_000) }
        var survivors: [String: String] = [:]  // "Entity/id" of a merged record → its survivor's
        for conflict in conflicts where conflict.rule == "uniqueMerge" {
            guard let survivor = conflict.survivor else { continue }
            let short = { (uri: String) in uri.split(separator: "/").suffix(2).joined(separator: "/") }
            survivors[short(conflict.record)] = short(survivor)
        }
        var last: [String: Write] = [:]
        for write in writes { last["\(write.replica) \(write.record) \(write.column)"] = write }
        for write in last.values.sorted(by: { $0.step < $1.step }) {
            if try Self.value(replicas[0], write.record, write.column) == write.json { continue }
            let id = String(write.record.split(separator: "/")[1])
            // A later write of it, or of a record merged into it (its updates go to the survivor).
            if writes.contains(where: { ($0.record == write.record || survivors[$0.record] == write.record) && $0.column == write.column && $0.step > write.step }) { continue }
            if deletes.contains(where: { $0.record == write.record && $0.step > write.step }) { continue }
            // The same value another replica wrote before and then replaced itself (a rename of
            // its own record, whose id this replica made too): the server held that value when
            // this write came under an older stamp, saw nothing new in it, and the rename,
            // stamped later (a clock ahead), replaced both. That replica's rename is checked.
            if writes.contains(where: { earlier in
                earlier.record == write.record && earlier.column == write.column && earlier.json == write.json && earlier.replica != write.replica && earlier.step < write.step
                    && writes.contains { $0.replica == earlier.replica && $0.record == write.record && $0.column == write.column && $0.step > earlier.step }
            }) {
                continue
            }
            if conflicts.contains(where: { Self.mentions($0, id: id, write: write) }) { continue }
            // A reference to a record merged into another now points at the survivor.
            let final = try Self.value(replicas[0], write.record, write.column)
            if write.column == "project",
                conflicts.contains(where: { conflict in
                    conflict.rule == "uniqueMerge" && write.json.contains(conflict.record.split(separator: "/").last.map(String.init) ?? "-")
                        && final.map { final in conflict.survivor.map { final.contains($0.split(separator: "/").last.map(String.init) ?? "-") } ?? false } ?? false
                })
            {
                continue
            }
            // A todo that went with its project (cascade), or a record deleted concurrently.
            if try Self.value(replicas[0], write.record, write.column) == nil,
                deletes.contains(where: { $0.record == write.record }) || (write.record.hasPrefix("Todo/") && !projectDeletes.isEmpty)
            {
                continue
            }
            problems.append(
                "replica \(write.replica)'s \(write.record) \(write.column) = \(write.json) (step \(write.step)) is nowhere: the replicas hold \(try Self.value(replicas[0], write.record, write.column) ?? "no record") and no conflict log has it"
            )
        }
        let debug = ProcessInfo.processInfo.environment["TANDEM_SIM_DEBUG"]
        if debug == "always" || (!problems.isEmpty && debug != nil) {
            for (index, replica) in all.enumerated() {
                print(
                    "replica \(index) conflicts:",
                    try SyncStatus.conflicts(of: replica, limit: 1000).reversed().map {
                        "\($0.record.suffix(3)) \($0.attribute) \($0.rule) \($0.winner) l=\($0.localValue ?? "-") r=\($0.remoteValue ?? "-") s=\($0.survivor?.suffix(3) ?? "")"
                    })
                print(
                    "replica \(index) merged:",
                    try replica.read { db in try Row.fetchAll(db, sql: "SELECT loser, survivor FROM tandem_sync_merged").map { "\(($0[0] as String).suffix(3))→\(($0[1] as String).suffix(3))" } })
            }
            let entries = try await base.send(TransportRequest(method: "GET", path: "/v1/datasets/\(dataset)/pull?limit=1000", headers: ["Authorization": "Bearer \(token)"]))
            print(String(decoding: entries.body, as: UTF8.self))
        }
        guard problems.isEmpty else {
            return "seed \(seed): " + problems.joined(separator: "\n") + "\n  history: " + log.joined(separator: "; ")
        }
        return nil
    }

    /// Whether `conflict` keeps `write`'s value: the same column's value, a merged record's
    /// values, or the record's existence (a delete against an edit).
    static func mentions(_ conflict: SyncConflict, id: String, write: Write) -> Bool {
        guard conflict.record.hasSuffix(id), conflict.attribute == write.column || conflict.attribute == "*" else { return false }
        for value in [conflict.localValue, conflict.remoteValue] {
            guard let value else {
                if conflict.attribute == "*" { return true }
                continue
            }
            if value == write.json { return true }
            let member: String = "\"" + write.column + "\":" + write.json
            if value.contains(member) { return true }
        }
        return false
    }

    static func run(seeds: [UInt64], planted: Plant, stopAtFirst: Bool) async throws -> [String] {
        try await ConvergenceSimulationTests.histories(seeds: seeds, stopAtFirst: stopAtFirst) { seed, client, token in
            try await history(seed: seed, client: client, token: token, planted: planted)
        }
    }

    @Test func replicasWithLyingClocksUniqueValuesCompositesAndLinksConvergeAndLoseNothing() async throws {
        let seeds = ConvergenceSimulationTests.seeds(Self.histories, first: Self.first) { $0 &* 0x2F6B_3A1D }
        let failures = try await Self.run(seeds: seeds, planted: .none, stopAtFirst: false)
        #expect(failures.isEmpty, "\(failures.count) of \(seeds.count) histories failed; the first:\n\(failures.first ?? "")")
    }

    /// Histories the soak found diverging, kept once fixed. 319813665162: a link older than a
    /// delete of its todo that lost on the server (a newer insert of the todo got there
    /// first) is answered lost to that delete, and its maker, which pulls no delete, kept it.
    /// 228324681347: a swap of two names in one save, one record merged away meanwhile, gave
    /// the survivor two values under one stamp; a fresh replica, whose insert of the survivor
    /// waited in the quarantine, folded the updates in keeping the first of the two.
    @Test func historiesTheSoakFoundDivergingConverge() async throws {
        let failures = try await Self.run(seeds: [319_813_665_162, 228_324_681_347], planted: .none, stopAtFirst: false)
        #expect(failures.isEmpty, "\(failures.first ?? "")")
    }

    @Test func theSimulationCatchesAPlantedSyncThatNeverRepairsARefusedClock() async throws {
        let failures = try await Self.run(seeds: (1...60).map { UInt64($0) &* 0x2F6B_3A1D }, planted: .noClockRepair, stopAtFirst: true)
        #expect(!failures.isEmpty, "edits refused for a clock ahead, never repaired, went unnoticed")
    }
}

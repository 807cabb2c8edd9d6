import Foundation
import GRDB
import Logging
import Tandem
import TandemCurl
import TandemSchema
import TandemSync
import TandemSyncTestSupport
import Testing

/// Three app versions in the field at once, through a real `tandem-server`: version 1 (a
/// `Todo` with a title and an enum `kind`), version 2 (adds the optional `note` and the
/// entity `Tag`, and renames `title` to `heading` with `originalName: "title"`), version 3
/// (adds the case `three` to `kind`, renames the entity `Tag` to `Label` with
/// `originalName: "Tag"`). Each replica edits what its
/// version has, in a random order, syncing now and then; every replica ends with every value
/// its version can show, values it cannot show are kept (not lost when it edits the same
/// records), and the oldest replica, migrated to version 3, shows them all without pulling.
@Suite("Schema evolution: three app versions syncing side by side", .serialized)
struct SchemaEvolutionProcessTests {
    static func schema(_ version: Int) -> Schema {
        var cases: [Schema.Enumeration.Case] = [.init(name: "one", rawValue: "0"), .init(name: "two", rawValue: "1")]
        if version >= 3 { cases.append(.init(name: "three", rawValue: "2")) }
        var todo = [
            version >= 2 ? Schema.Attribute(name: "heading", type: .scalar(.string), originalName: "title") : Schema.Attribute(name: "title", type: .scalar(.string)),
            Schema.Attribute(name: "kind", type: .enumeration(Schema.Enumeration(typeName: "Kind", rawType: .int, cases: cases)), defaultValue: ".one"),
        ]
        if version >= 2 {
            todo.append(Schema.Attribute(name: "note", type: .scalar(.string), isOptional: true))
            // Not optional, with a default: a store made at version 2 or later gives it to
            // the records older versions insert without it.
            todo.append(Schema.Attribute(name: "pinned", type: .scalar(.bool), defaultValue: "true"))
        }
        var entities = [Schema.Entity(name: "Todo", attributes: todo)]
        if version >= 2 {
            // Renamed at version 3, keeping its first name: its table, URIs and wire name stay `Tag`.
            entities.append(Schema.Entity(name: version >= 3 ? "Label" : "Tag", attributes: [Schema.Attribute(name: "name", type: .scalar(.string))], originalName: version >= 3 ? "Tag" : nil))
        }
        return Schema(entities: entities)
    }

    /// What every replica should show: the last value written to each field, by anyone.
    struct Oracle {
        var todos: [Int: [String: DatabaseValue]] = [:]
        var deleted: Set<Int> = []
        var tags: [Int: String] = [:]
    }

    /// A transport that refuses every pull: what the store shows after a sync through it
    /// was not pulled.
    struct PullRefusing: Transport {
        let base: any Transport
        func send(_ request: TransportRequest) async throws -> TransportResponse {
            if request.path.contains("/pull") { return TransportResponse(status: 503, headers: [:], body: Data(#"{"error":{"code":"unavailable","message":"no pulls"}}"#.utf8)) }
            return try await base.send(request)
        }
    }

    static let quiet = Logger(label: "evolution", factory: { _ in SwiftLogNoOpLogHandler() })

    static func engine(_ store: ModelContainer, _ server: SyncServerProcess, transport: (any Transport)? = nil) throws -> SyncEngine {
        SyncEngine(
            container: store, transport: try transport ?? CurlTransport(baseURL: server.base), configuration: SyncConfiguration(token: { server.token }),
            logger: quiet)
    }

    static func todos(_ store: ModelContainer, version: Int) throws -> [Int: [String: DatabaseValue]] {
        try store.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM Todo").reduce(into: [:]) { result, row in
                let id: String = row["#id"]
                // By the name it syncs under.
                var values: [String: DatabaseValue] = ["title": row[version >= 2 ? "heading" : "title"], "kind": row["kind"]]
                if version >= 2 { values["note"] = row["note"] }
                if version >= 2 { values["pinned"] = row["pinned"] }
                result[Int(id.suffix(12))!] = values
            }
        }
    }

    static func tags(_ store: ModelContainer) throws -> [Int: String] {
        try store.read { db in
            try Row.fetchAll(db, sql: "SELECT \"#id\", name FROM Tag").reduce(into: [:]) { $0[Int(($1[0] as String).suffix(12))!] = $1[1] }
        }
    }

    /// Whether `store` (of `version`) shows what `oracle` says, field by field, for every field
    /// its version can show; the problems found.
    static func differences(_ store: ModelContainer, version: Int, _ oracle: Oracle) throws -> [String] {
        var problems: [String] = []
        let rows = try todos(store, version: version)
        let expected = oracle.todos.filter { !oracle.deleted.contains($0.key) }
        if Set(rows.keys) != Set(expected.keys) { problems.append("v\(version) todos \(rows.keys.sorted()) ≠ \(expected.keys.sorted())") }
        for (n, values) in expected {
            guard let row = rows[n] else { continue }
            for (field, value) in values {
                if (field == "note" || field == "pinned") && version < 2 { continue }
                // A case version 1 and 2 do not know stays kept aside: not shown.
                if field == "kind" && version < 3 && value == 2.databaseValue { continue }
                if row[field] != value { problems.append("v\(version) todo \(n).\(field) = \(row[field] ?? .null), expected \(value)") }
            }
        }
        if version >= 2, try tags(store) != oracle.tags { problems.append("v\(version) tags \(try tags(store)) ≠ \(oracle.tags)") }
        return problems
    }

    /// An edit an app of one of the versions makes.
    enum Edit { case insertTodo, title, note, kind, insertTag, delete }

    /// Makes `edit` on `store` as the app of `version` would, on a record the replica has,
    /// and records it in `oracle` (new records take ids from `next`); what it did, for a
    /// history's log, or `nil` when the edit does not apply there (no record, an older
    /// version).
    static func make(
        _ edit: Edit, on store: ModelContainer, version: Int, step: Int, random: inout SplitMix64, oracle: inout Oracle, next: inout Int
    ) throws -> String? {
        func pick(_ count: Int) -> Int { Int(random.next() % UInt64(count)) }
        // Edits reach the records this replica has (pulled or made here).
        let here = try todos(store, version: version)
        let live = oracle.todos.keys.filter { !oracle.deleted.contains($0) && here[$0] != nil }.sorted()
        switch edit {
        case .insertTodo:
            let n = next
            next += 1
            let kind = pick(version >= 3 ? 3 : 2)
            let note: String? = version >= 2 && pick(2) == 0 ? "note \(step)" : nil
            try store.write(author: "app") { db in
                if version >= 2 {
                    try db.execute(sql: "INSERT INTO Todo (\"#id\", heading, kind, note, pinned) VALUES (?, ?, ?, ?, 1)", arguments: [SyncFixtures.id(n), "todo \(step)", kind, note])
                } else {
                    try db.execute(sql: "INSERT INTO Todo (\"#id\", title, kind) VALUES (?, ?, ?)", arguments: [SyncFixtures.id(n), "todo \(step)", kind])
                }
            }
            // `pinned` is its default everywhere: version 1 does not send it.
            oracle.todos[n] = ["title": "todo \(step)".databaseValue, "kind": kind.databaseValue, "note": note.databaseValue, "pinned": true.databaseValue]
            return "insert \(n) kind \(kind)"
        case .title where !live.isEmpty:
            let n = live[pick(live.count)]
            try SyncFixtures.update(store, n, version >= 2 ? "heading" : "title", "edit \(step)")
            oracle.todos[n]?["title"] = "edit \(step)".databaseValue
            return "title \(n)"
        case .note where !live.isEmpty && version >= 2:
            let n = live[pick(live.count)]
            try SyncFixtures.update(store, n, "note", "note \(step)")
            oracle.todos[n]?["note"] = "note \(step)".databaseValue
            return "note \(n)"
        case .kind where !live.isEmpty:
            let n = live[pick(live.count)]
            // Version 3 mostly writes the case the others do not know.
            let kind = version >= 3 && pick(2) == 0 ? 2 : pick(2)
            try SyncFixtures.update(store, n, "kind", kind)
            // Setting the value a replica shows changes nothing (no journal entry), also
            // where it keeps a newer case aside that it cannot show.
            if here[n]?["kind"] != kind.databaseValue { oracle.todos[n]?["kind"] = kind.databaseValue }
            return "kind \(n)=\(kind)"
        case .insertTag where version >= 2:
            let n = next
            next += 1
            try store.write(author: "app") { db in
                try db.execute(sql: "INSERT INTO Tag (\"#id\", name) VALUES (?, ?)", arguments: [SyncFixtures.id(n), "tag \(step)"])
            }
            oracle.tags[n] = "tag \(step)"
            return "tag \(n)"
        case .delete where live.count > 2:
            let n = live[pick(live.count)]
            try SyncFixtures.delete(store, n)
            oracle.deleted.insert(n)
            return "delete \(n)"
        default:
            return nil
        }
    }

    @Test(arguments: [1, 2, 3])
    func threeVersionsConvergeOnWhatEachCanShowAndTheOldestShowsTheRestOnceMigrated(seed: UInt64) async throws {
        let server = try await SyncServerProcess.make()
        let directory = FileManager.default.temporaryDirectory.appending(path: "tandem-evolution-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let urls = (1...3).map { directory.appending(path: "v\($0).store") }
        var stores = try (1...3).map { try ModelContainer(schema: Self.schema($0), configuration: ModelConfiguration(url: urls[$0 - 1], dataset: "todos")) }
        var engines = try stores.map { try Self.engine($0, server) }
        // Registered in release order, as the apps would ship.
        for engine in engines { _ = try await engine.sync() }

        var random = SplitMix64(seed: seed)
        var oracle = Oracle()
        var next = 1
        for step in 0..<70 {
            let replica = Int(random.next() % 3)
            let version = replica + 1
            let edits: [Edit?] = [.insertTodo, .insertTodo, .insertTodo, .title, .title, .note, .kind, .insertTag, .delete, nil]
            if let edit = edits[Int(random.next() % UInt64(edits.count))] {
                _ = try Self.make(edit, on: stores[replica], version: version, step: step, random: &random, oracle: &oracle, next: &next)
            }
            // Stamps follow real time: each write is the last one when it is made.
            try await Task.sleep(for: .milliseconds(3))
            if random.next() % 2 == 0 { _ = try await engines[replica].sync() }
        }
        for _ in 0..<2 {
            for engine in engines { #expect(try await engine.sync().isComplete) }
        }
        for version in 1...3 {
            let problems = try Self.differences(stores[version - 1], version: version, oracle)
            #expect(problems.isEmpty, "seed \(seed): \(problems)")
        }
        if !oracle.tags.isEmpty {
            // Version 3 names the renamed entity by its class name; its records keep the URIs of `Tag`.
            var labels = HistoryDescriptor()
            labels.entityNames = ["Label"]
            let changes = try stores[2].fetchHistory(labels).flatMap(\.changes)
            #expect(!changes.isEmpty && changes.allSatisfy { $0.persistentModelID.uriRepresentation.absoluteString.hasPrefix("tandem://todos/Tag/") })
        }
        let shownLater = oracle.todos.contains { !oracle.deleted.contains($0.key) && ($0.value["kind"] == 2.databaseValue || $0.value["note"] != .null) } || !oracle.tags.isEmpty
        #expect(shownLater, "the history wrote values version 1 cannot show (else the test shows nothing)")
        #expect(try await engines[0].sync().keptForNewerSchema > 0, "version 1 keeps them")
        #expect(try SyncStatus(of: stores[0]).keptForNewerSchema > 0, "and its status says so")

        // The oldest app updates: its store migrates to version 3 and shows every value at its
        // next sync, before (and without) any pull.
        stores[0] = try ModelContainer(schema: Self.schema(3), configuration: ModelConfiguration(url: urls[0], dataset: "todos"))
        engines[0] = try Self.engine(stores[0], server)
        let migrated = try Self.engine(stores[0], server, transport: PullRefusing(base: try CurlTransport(baseURL: server.base)))
        await #expect(throws: SyncError.self) { try await migrated.sync() }
        let problems = try Self.differences(stores[0], version: 3, oracle)
        #expect(problems.isEmpty, "seed \(seed), migrated: \(problems)")
        #expect(try await Self.engine(stores[0], server).sync().keptForNewerSchema == 0, "nothing is kept once the schema shows it all")
        #expect(try Self.differences(stores[0], version: 3, oracle).isEmpty)
    }

    /// Edits not pushed yet across two local renames (`title` → `heading` → `caption`, each
    /// keeping `originalName: "title"`) are sent under the name the attribute syncs under:
    /// the first sync after both is complete, and another replica gets the newest value.
    @Test func editsJournaledBeforeTwoRenamesAreSentUnderTheFirstName() async throws {
        let server = try await SyncServerProcess.make()
        let directory = FileManager.default.temporaryDirectory.appending(path: "tandem-renames-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func schema(_ name: String) -> Schema {
            Schema(entities: [Schema.Entity(name: "Todo", attributes: [Schema.Attribute(name: name, type: .scalar(.string), originalName: name == "title" ? nil : "title")])])
        }
        let url = directory.appending(path: "a.store")
        var store = try ModelContainer(schema: schema("title"), configuration: ModelConfiguration(url: url, dataset: "todos"))
        try store.write(author: "app") { db in try db.execute(sql: "INSERT INTO Todo (\"#id\", title) VALUES (?, 'first')", arguments: [SyncFixtures.id(1)]) }
        store = try ModelContainer(schema: schema("heading"), configuration: ModelConfiguration(url: url, dataset: "todos"))
        try store.write(author: "app") { db in try db.execute(sql: "INSERT INTO Todo (\"#id\", heading) VALUES (?, 'second')", arguments: [SyncFixtures.id(2)]) }
        try await Task.sleep(for: .milliseconds(3))
        try SyncFixtures.update(store, 1, "heading", "first, edited")
        store = try ModelContainer(schema: schema("caption"), configuration: ModelConfiguration(url: url, dataset: "todos"))
        #expect(try store.formerColumnNames() == ["Todo": ["heading": "title"]])
        let summary = try await Self.engine(store, server).sync()
        #expect(summary.isComplete && summary.waitingLocal == 0, "\(summary)")
        let other = try ModelContainer(schema: schema("title"), configuration: ModelConfiguration(url: directory.appending(path: "b.store"), dataset: "todos"))
        _ = try await Self.engine(other, server).sync()
        let rows = try other.read { db in try Row.fetchAll(db, sql: "SELECT \"#id\", title FROM Todo ORDER BY \"#id\"").map { "\($0[1] as String)" } }
        #expect(rows == ["first, edited", "second"])
    }

    /// An edit journaled before a local rename and not pushed yet is this replica's edit of
    /// the renamed column: a conflict policy decides it (`clientWins` here, over a newer
    /// value from elsewhere), every replica ends with it, and the value that lost is logged.
    @Test(arguments: [true, false])
    func anEditMadeBeforeARenameIsTheLocalSideOfAConflict(clientWins: Bool) async throws {
        let server = try await SyncServerProcess.make()
        let directory = FileManager.default.temporaryDirectory.appending(path: "tandem-renamed-conflict-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func schema(_ name: String) -> Schema {
            Schema(entities: [Schema.Entity(name: "Todo", attributes: [Schema.Attribute(name: name, type: .scalar(.string), originalName: name == "title" ? nil : "title")])])
        }
        let urlA = directory.appending(path: "a.store")
        let a = try ModelContainer(schema: schema("title"), configuration: ModelConfiguration(url: urlA, dataset: "todos"))
        let b = try ModelContainer(schema: schema("title"), configuration: ModelConfiguration(url: directory.appending(path: "b.store"), dataset: "todos"))
        try a.write(author: "app") { db in try db.execute(sql: "INSERT INTO Todo (\"#id\", title) VALUES (?, 'first')", arguments: [SyncFixtures.id(1)]) }
        _ = try await Self.engine(a, server).sync()
        _ = try await Self.engine(b, server).sync()
        try SyncFixtures.update(a, 1, "title", "mine")
        try await Task.sleep(for: .milliseconds(3))
        try SyncFixtures.update(b, 1, "title", "theirs")
        _ = try await Self.engine(b, server).sync()

        let renamed = try ModelContainer(schema: schema("heading"), configuration: ModelConfiguration(url: urlA, dataset: "todos"))
        var configuration = SyncConfiguration(token: { server.token })
        configuration.conflictPolicies["Todo.heading"] = clientWins ? .clientWins : .serverWins
        let engine = SyncEngine(container: renamed, transport: try CurlTransport(baseURL: server.base), configuration: configuration, logger: Self.quiet)
        #expect(try await engine.sync().isComplete)
        _ = try await Self.engine(b, server).sync()
        let expected = clientWins ? "mine" : "theirs"
        #expect(try renamed.read { db in try String.fetchOne(db, sql: "SELECT heading FROM Todo") } == expected)
        #expect(try b.read { db in try String.fetchOne(db, sql: "SELECT title FROM Todo") } == expected)
        let lost = clientWins ? "theirs" : "mine"
        let logged = try SyncStatus.conflicts(of: renamed)
        #expect(logged.contains { ($0.localValue ?? "").contains(lost) || ($0.remoteValue ?? "").contains(lost) }, "the value that lost is logged: \(logged)")
    }
}

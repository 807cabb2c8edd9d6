import Foundation
import Testing
import TandemSchemaTestSupport

/// `tandem init` and `tandem records` on store files, as processes: migrating from schema
/// JSON, delete rules, and two writers at once.
@Suite("tandem init and records (the CLI process)")
struct CLIStoreTests {
    typealias Workspace = CLITests.Workspace

    static func json(_ run: CLITests.Run) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any], "not JSON: \(run.output) \(run.error)")
    }

    @Test func initMigratesAStoreToASchemaWithANewAttributeAndItsLiteralDefault() throws {
        let workspace = try Workspace()
        let v1 = try workspace.release("v1", note("var title: String = \"\""))
        let v2 = try workspace.release("v2", note("var title: String = \"\"\nvar note: String = \"none\"\nvar count: Int = 3\nvar extra: Double?"))
        let store = workspace.path("notes.store")
        #expect(try workspace.run("init", "--store", store, "--schema", v1).status == 0)
        let put = try workspace.run("records", "put", "--store", store, "--entity", "Note", #"{"title": "old"}"#)
        #expect(put.status == 0, "\(put.error)")
        let uri = put.output.trimmingCharacters(in: .whitespacesAndNewlines)

        let migrated = try workspace.run("init", "--store", store, "--schema", v2)
        #expect(migrated.status == 0, "\(migrated.error)")
        let old = try workspace.run("records", "get", "--store", store, uri)
        #expect(old.status == 0, "\(old.error)")
        let values = try #require(try Self.json(old)["values"] as? [String: Any])
        #expect(values["note"] as? String == "none" && values["count"] as? Int == 3 && values["extra"] is NSNull)
        // Writes (journaled by the rebuilt triggers) work on the new columns.
        let written = try workspace.run("records", "put", "--store", store, "--entity", "Note", #"{"title": "new", "note": "n", "count": 1}"#)
        #expect(written.status == 0, "\(written.error)")
        let updated = try workspace.run("records", "put", "--store", store, "--entity", "Note", "--id", String(uri.split(separator: "/").last!), #"{"note": "changed"}"#)
        #expect(updated.status == 0, "\(updated.error)")
    }

    @Test func initRefusesADefaultOnlyTheAppCanComputeAndLeavesTheStoreAsItWas() throws {
        let workspace = try Workspace()
        let v1 = try workspace.release("v1", note("var title: String = \"\""))
        let v2 = try workspace.release("v2", note("var title: String = \"\"\nvar created: Date = .now"))
        let store = workspace.path("notes.store")
        #expect(try workspace.run("init", "--store", store, "--schema", v1).status == 0)
        let put = try workspace.run("records", "put", "--store", store, "--entity", "Note", #"{"title": "old"}"#)
        let refused = try workspace.run("init", "--store", store, "--schema", v2)
        #expect(refused.status != 0)
        #expect(refused.error.contains("Note.created") && refused.error.contains("literal"), "\(refused.error)")
        // The store keeps its schema: the new attribute is not there.
        let unknown = try workspace.run("records", "put", "--store", store, "--entity", "Note", #"{"created": 1.0}"#)
        #expect(unknown.status != 0 && unknown.error.contains("no column 'created'"), "\(unknown.error)")
        let old = try workspace.run("records", "get", "--store", store, put.output.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(old.status == 0, "\(old.error)")
    }

    @Test func anEnumTakesItsDeclaredDefaultCaseAndRefusesARawValueOfNoCase() throws {
        let workspace = try Workspace()
        let v1 = try workspace.release(
            "v1", note("var title: String = \"\"\nvar priority: Priority = .normal", "enum Priority: Int, Codable { case low, normal, high }"))
        let store = workspace.path("notes.store")
        #expect(try workspace.run("init", "--store", store, "--schema", v1).status == 0)
        let put = try workspace.run("records", "put", "--store", store, "--entity", "Note", #"{"title": "t"}"#)
        #expect(put.status == 0, "\(put.error)")
        let got = try workspace.run("records", "get", "--store", store, put.output.trimmingCharacters(in: .whitespacesAndNewlines))
        let values = try #require(try Self.json(got)["values"] as? [String: Any])
        #expect(values["priority"] as? Int == 1, "the case .normal: \(values)")
        let refused = try workspace.run("records", "put", "--store", store, "--entity", "Note", #"{"title": "t", "priority": 42}"#)
        #expect(refused.status != 0 && refused.error.contains("42 is not a case of Priority") && refused.error.contains("1 (normal)"), "\(refused.error)")
    }

    @Test func aRenamedModelIsNamedEitherWayAndItsURIsKeepTheFirstName() throws {
        let workspace = try Workspace()
        let v1 = try workspace.release("v1", note("var title: String = \"\""))
        let v2 = try workspace.release("v2", "import Tandem\n@Model(originalName: \"Note\") final class Memo {\n    var title: String = \"\"\n    init() {}\n}\n")
        let store = workspace.path("notes.store")
        #expect(try workspace.run("init", "--store", store, "--schema", v1).status == 0)
        let first = try workspace.run("records", "put", "--store", store, "--entity", "Note", #"{"title": "old"}"#)
        #expect(first.status == 0, "\(first.error)")
        let migrated = try workspace.run("init", "--store", store, "--schema", v2)
        #expect(migrated.status == 0, "\(migrated.error)")
        let second = try workspace.run("records", "put", "--store", store, "--entity", "Memo", #"{"title": "new"}"#)
        #expect(second.status == 0 && second.output.contains("/Note/"), "\(second.output) \(second.error)")
        for name in ["Memo", "Note"] {
            let listed = try workspace.run("records", "list", "--store", store, "--entity", name)
            let records = try #require(try JSONSerialization.jsonObject(with: Data(listed.output.utf8)) as? [[String: Any]], "\(listed.error)")
            #expect(records.count == 2 && records.allSatisfy { ($0["record"] as? String)?.contains("/Note/") == true }, "\(name): \(listed.output)")
            let history = try workspace.run("history", "--store", store, "--entity", name)
            #expect(history.status == 0 && history.output.contains("old") && history.output.contains("new"), "\(name): \(history.output) \(history.error)")
        }
        let memoURI = first.output.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "/Note/", with: "/Memo/")
        let deleted = try workspace.run("records", "delete", "--store", store, memoURI)
        #expect(deleted.status == 0 && deleted.output.contains(first.output.trimmingCharacters(in: .whitespacesAndNewlines)), "\(deleted.output) \(deleted.error)")
    }

    static let projects = """
        import Tandem
        @Model final class Project {
            var name: String = ""
            @Relationship(deleteRule: .cascade, inverse: \\Todo.project) var todos: [Todo] = []
            @Relationship(deleteRule: .deny, inverse: \\Owner.project) var owners: [Owner] = []
            init() {}
        }
        @Model final class Todo { var title: String = ""; var project: Project?; init() {} }
        @Model final class Owner { var name: String = ""; var project: Project?; init() {} }
        """

    @Test func recordsDeleteAppliesTheDeleteRules() throws {
        let workspace = try Workspace()
        let schema = try workspace.release("s", Self.projects)
        let store = workspace.path("p.store")
        #expect(try workspace.run("init", "--store", store, "--schema", schema).status == 0)
        func put(_ entity: String, _ values: String) throws -> String {
            let run = try workspace.run("records", "put", "--store", store, "--entity", entity, values)
            #expect(run.status == 0, "\(run.error)")
            return run.output.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let project = try put("Project", #"{"name": "p"}"#)
        let id = String(project.split(separator: "/").last!)
        _ = try put("Todo", #"{"title": "a", "project": "\#(id)"}"#)
        _ = try put("Todo", #"{"title": "b", "project": "\#(id)"}"#)
        let owner = try put("Owner", #"{"name": "o", "project": "\#(id)"}"#)

        let denied = try workspace.run("records", "delete", "--store", store, project)
        #expect(denied.status != 0 && denied.error.contains(".deny"), "\(denied.output) \(denied.error)")
        #expect(try workspace.run("records", "get", "--store", store, project).status == 0, "refused: nothing deleted")

        #expect(try workspace.run("records", "delete", "--store", store, owner).status == 0)
        let deleted = try workspace.run("records", "delete", "--store", store, project)
        #expect(deleted.status == 0, "\(deleted.error)")
        #expect(deleted.output.contains("2 Todo"), "\(deleted.output)")
        let todos = try workspace.run("records", "list", "--store", store, "--entity", "Todo")
        #expect(todos.output.trimmingCharacters(in: .whitespacesAndNewlines) == "[\n\n]" || !todos.output.contains("title"), "\(todos.output)")
    }

    @Test func recordsPutTakesReferencesAsUUIDsOrURIsFillsDefaultsAndRefusesWhatItCannotKeep() throws {
        let workspace = try Workspace()
        let schema = try workspace.release("s", Self.projects)
        let store = workspace.path("p.store")
        #expect(try workspace.run("init", "--store", store, "--schema", schema).status == 0)
        let project = try workspace.run("records", "put", "--store", store, "--entity", "Project", #"{"name": "p"}"#).output
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let id = String(project.split(separator: "/").last!)
        // An upper-case UUID and the record's URI both name it; the store keeps the lowercase UUID.
        for reference in [id.uppercased(), project] {
            let run = try workspace.run("records", "put", "--store", store, "--entity", "Todo", #"{"title": "t", "project": "\#(reference)"}"#)
            #expect(run.status == 0, "\(run.error)")
            let todo = try workspace.run("records", "get", "--store", store, run.output.trimmingCharacters(in: .whitespacesAndNewlines))
            #expect(todo.output.contains(#""project" : "\#(id)""#), "\(todo.output)")
        }
        // A project this store does not hold: refused (it would point nowhere on every replica), nothing written.
        let absent = try workspace.run(
            "records", "put", "--store", store, "--entity", "Todo", "--id", "00000000-0000-0000-0000-0000000000aa",
            #"{"title": "t", "project": "00000000-0000-0000-0000-0000000000ff"}"#)
        #expect(absent.status != 0 && absent.error.contains("no Project 00000000-0000-0000-0000-0000000000ff in the store"), "\(absent.error)")
        let list = try workspace.run("records", "list", "--store", store, "--entity", "Todo")
        #expect(list.status == 0 && !list.output.contains("0000000000aa"), "nothing written: \(list.output)")
        let bad = try workspace.run("records", "put", "--store", store, "--entity", "Todo", #"{"title": "t", "project": "not-a-uuid"}"#)
        #expect(bad.status == 2 && bad.error.contains("is not a Project's UUID"), "\(bad.error)")
        // Text with a NUL inside is kept and shown whole.
        let nul = try workspace.run("records", "put", "--store", store, "--entity", "Todo", #"{"title": "before\u0000after"}"#)
        #expect(nul.status == 0, "\(nul.error)")
        let shown = try workspace.run("records", "get", "--store", store, nul.output.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(shown.output.contains(#""title" : "before\u0000after""#), "\(shown.output)")
        let listed = try workspace.run("records", "list", "--store", store, "--entity", "Todo")
        #expect(listed.output.contains(#""before\u0000after""#), "\(listed.output)")
        // The title is left out: its default ("") is written.
        let defaulted = try workspace.run("records", "put", "--store", store, "--entity", "Todo", #"{"project": null}"#)
        #expect(defaulted.status == 0, "\(defaulted.error)")
        // The delete rule reaches both todos (their references are the project's UUID).
        let deleted = try workspace.run("records", "delete", "--store", store, project)
        #expect(deleted.output.contains("2 Todo"), "\(deleted.output) \(deleted.error)")
    }

    static let tags = """
        import Tandem
        @Model final class Tag {
            var label: String = ""
            @Relationship(inverse: \\Todo.tags) var todos: [Todo] = []
            init() {}
        }
        @Model final class Todo { var title: String = ""; var tags: [Tag] = []; init() {} }
        """

    @Test func recordsPutSetsTheMembersOfAManyToManyRelationshipAndGetShowsThem() throws {
        let workspace = try Workspace()
        let schema = try workspace.release("s", Self.tags)
        let store = workspace.path("t.store")
        #expect(try workspace.run("init", "--store", store, "--schema", schema).status == 0)
        func put(_ entity: String, _ values: String, id: String? = nil) throws -> CLITests.Run {
            try workspace.run(["records", "put", "--store", store, "--entity", entity] + (id.map { ["--id", $0] } ?? []) + [values])
        }
        let one = try put("Todo", #"{"title": "one"}"#).output.trimmingCharacters(in: .whitespacesAndNewlines)
        let two = try put("Todo", #"{"title": "two"}"#).output.trimmingCharacters(in: .whitespacesAndNewlines)
        let (idOne, idTwo) = (String(one.split(separator: "/").last!), String(two.split(separator: "/").last!))
        // Members as a URI and as an upper-case UUID.
        let tag = try put("Tag", #"{"label": "home", "todos": ["\#(one)", "\#(idTwo.uppercased())"]}"#)
        #expect(tag.status == 0, "\(tag.error)")
        let uri = tag.output.trimmingCharacters(in: .whitespacesAndNewlines)
        let tagID = String(uri.split(separator: "/").last!)
        let read = try CLIStoreTests.json(try workspace.run("records", "get", "--store", store, uri))
        #expect((read["links"] as? [String: [String]])?["todos"] == [idOne, idTwo].sorted())
        // From the other side too.
        let todo = try CLIStoreTests.json(try workspace.run("records", "get", "--store", store, one))
        #expect((todo["links"] as? [String: [String]])?["tags"] == [tagID])
        // The members become exactly those given.
        #expect(try put("Tag", #"{"todos": ["\#(idTwo)"]}"#, id: tagID).status == 0)
        let after = try CLIStoreTests.json(try workspace.run("records", "get", "--store", store, uri))
        #expect((after["links"] as? [String: [String]])?["todos"] == [idTwo])
        let bad = try put("Tag", #"{"todos": ["nope"]}"#, id: tagID)
        #expect(bad.status == 2 && bad.error.contains("is not a Todo's UUID"), "\(bad.error)")
        // A member this store does not hold: refused (the server would refuse the link), nothing written.
        let absent = try put("Tag", #"{"todos": ["\#(idTwo)", "00000000-0000-0000-0000-0000000000ff"]}"#, id: tagID)
        #expect(absent.status != 0 && absent.error.contains("no Todo 00000000-0000-0000-0000-0000000000ff in the store"), "\(absent.error)")
        let unchanged = try CLIStoreTests.json(try workspace.run("records", "get", "--store", store, uri))
        #expect((unchanged["links"] as? [String: [String]])?["todos"] == [idTwo])
        let notAnArray = try put("Tag", #"{"todos": null}"#, id: tagID)
        #expect(notAnArray.status == 2 && notAnArray.error.contains("todos: a many-to-many relationship takes an array"), "\(notAnArray.error)")
        let object = try put("Tag", #"{"label": {"x": 1}}"#, id: tagID)
        #expect(object.status == 2 && object.error.contains("label: an object is not a column value"), "\(object.error)")
        let notLinks = try put("Todo", #"{"title": ["x"]}"#, id: idOne)
        #expect(notLinks.status == 2 && notLinks.error.contains("many-to-many"), "\(notLinks.error)")
    }

    @Test func twoWritersAtOnceBothSucceed() throws {
        let workspace = try Workspace()
        let schema = try workspace.release("s", note("var title: String = \"\""))
        let store = workspace.path("w.store")
        #expect(try workspace.run("init", "--store", store, "--schema", schema).status == 0)
        // Two processes opening and writing the same store in a loop: each open and write
        // waits for the other's lock instead of failing with "database is locked".
        let failures = LockedCount()
        DispatchQueue.concurrentPerform(iterations: 2) { writer in
            for n in 0..<15 {
                let run = try? workspace.run("records", "put", "--store", store, "--entity", "Note", #"{"title": "w\#(writer) n\#(n)"}"#)
                if run?.status != 0 { failures.add(run?.error ?? "did not run") }
            }
        }
        #expect(failures.messages.isEmpty, "\(failures.messages)")
        let list = try workspace.run("records", "list", "--store", store, "--entity", "Note")
        #expect(list.output.components(separatedBy: "\"title\"").count - 1 == 30)
    }

    final class LockedCount: @unchecked Sendable {
        // @unchecked Sendable: every access to `stored` holds `lock`.
        private let lock = NSLock()
        private var stored: [String] = []
        func add(_ message: String) { lock.withLock { stored.append(message) } }
        var messages: [String] { lock.withLock { stored } }
    }

    @Test func aConfigFileWithAnEmptyPolicyKeyIsAnErrorNotACrash() throws {
        let workspace = try Workspace()
        let schema = try workspace.release("s", note("var title: String = \"\""))
        let store = workspace.path("c.store")
        #expect(try workspace.run("init", "--store", store, "--schema", schema).status == 0)
        let token = try workspace.write("token", "t")
        let config = try workspace.write("config.json", #"{"server": "http://127.0.0.1:9", "tokenFile": "\#(token)", "conflictPolicies": {"": "serverWins"}}"#)
        var run = try workspace.run("sync", "--store", store, "--config", config)
        #expect(run.status == 2 && run.error.contains("conflictPolicies"), "\(run.status) \(run.error)")
        let misspelt = try workspace.write("config2.json", #"{"server": "http://127.0.0.1:9", "tokenFile": "\#(token)", "conflictPolicies": {"Note.titel": "serverWins"}}"#)
        run = try workspace.run("sync", "--store", store, "--config", misspelt)
        #expect(run.status == 2 && run.error.contains("no column 'titel'"), "\(run.status) \(run.error)")
    }

    /// A misspelt setting is named (before, `tokenfile` was ignored and surfaced as "no
    /// token"), and a relative `tokenFile` is of the config file's directory, wherever the
    /// command runs (a hostile trial).
    @Test func aConfigFilesUnknownKeyIsAnErrorAndItsRelativeTokenFileIsBesideIt() throws {
        let workspace = try Workspace()
        let schema = try workspace.release("s", note("var title: String = \"\""))
        let store = workspace.path("c.store")
        #expect(try workspace.run("init", "--store", store, "--schema", schema).status == 0)
        let directory = workspace.path("conf")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try "t".write(toFile: directory + "/token", atomically: true, encoding: .utf8)
        let misspelt = directory + "/misspelt.json"
        try #"{"server": "http://127.0.0.1:9", "tokenfile": "token"}"#.write(toFile: misspelt, atomically: true, encoding: .utf8)
        var run = try workspace.run("sync", "--store", store, "--config", misspelt)
        #expect(run.status == 2 && run.error.contains("'tokenfile'") && run.error.contains("tokenFile"), "\(run.status) \(run.error)")
        // Run from the workspace, which holds no file "token": read beside the config, the
        // token gets as far as the (unreachable) server.
        let relative = directory + "/config.json"
        try #"{"server": "http://127.0.0.1:9", "tokenFile": "token"}"#.write(toFile: relative, atomically: true, encoding: .utf8)
        run = try workspace.run("sync", "--store", store, "--config", relative)
        #expect(run.status == 3 && !run.error.contains("token"), "\(run.status) \(run.error)")
    }
}

import Foundation
import Testing

/// The release pipeline as a CI job runs it: `tandem schema publish` and `tandem schema check
/// --server` against a real `tandem-server`, with models in the style of the seed articles
/// (an enum with raw values that is not CaseIterable), and the sync handshake of a store whose
/// schema the server refuses.
@Suite("Schema release pipeline (the processes)", .serialized)
struct SchemaPipelineProcessTests {
    static func models(_ members: String, _ cases: String) -> String {
        """
        import Tandem

        enum MyType: Int, Codable { \(cases) }

        @Model final class Note {
            var title: String = ""
            var kind: MyType = .one
            \(members)
            init() {}
        }
        """
    }

    /// Runs `tandem` with `arguments`; its exit status and outputs.
    static func tandem(_ arguments: [String]) throws -> ChildProcess {
        try ChildProcess.run(try #require(DaemonProcessTests.tandem, "tandem is not built: run `swift build --build-tests`"), arguments)
    }

    /// A directory with one release's model source.
    static func release(_ directory: URL, _ name: String, _ source: String) throws -> String {
        let folder = directory.appending(path: name)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try source.write(to: folder.appending(path: "Models.swift"), atomically: true, encoding: .utf8)
        return folder.path(percentEncoded: false)
    }

    /// The versions the server registered for `dataset`.
    static func versions(_ server: SyncServerProcess, _ dataset: String) throws -> [Int] {
        let body = try SyncServerProcess.run(
            URL(filePath: "/usr/bin/curl"), ["-sf", "-H", "Authorization: Bearer \(server.token)", server.base + "/v1/datasets/\(dataset)/schema"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
        return (object["versions"] as? [[String: Any]] ?? []).compactMap { $0["version"] as? Int }
    }

    @Test func publishAndCheckAgainstALiveServerAndTheHandshakeRefusesWhatPublishRefuses() async throws {
        let server = try await SyncServerProcess.make()
        let directory = FileManager.default.temporaryDirectory.appending(path: "tandem-pipeline-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let tokenFile = directory.appending(path: "token").path(percentEncoded: false)
        try server.token.write(toFile: tokenFile, atomically: true, encoding: .utf8)
        let remote = ["--server", server.base, "--dataset", "notes", "--token-file", tokenFile]

        let v1 = try Self.release(directory, "v1", Self.models("", "case one, two, three"))
        let v2 = try Self.release(directory, "v2", Self.models("var body: String? = nil", "case one, two, three, four"))
        let removed = try Self.release(directory, "removed", Self.models("", "case one, two"))
        let renumbered = try Self.release(directory, "renumbered", Self.models("", "case one, two, three = 7"))

        // No such dataset: an error (a typo in CI must not pass), not a pass.
        let missing = try Self.tandem(["schema", "check"] + remote + ["--candidate", v1])
        #expect(missing.status == 2, "\(missing.out)\(missing.err)")
        #expect(missing.err.contains("no dataset 'notes'"))
        // A dataset without a version yet: nothing to check against.
        _ = try SyncServerProcess.run(URL(filePath: "/usr/bin/curl"), ["-sf", "-X", "PUT", "-H", "Authorization: Bearer \(server.token)", server.base + "/v1/datasets/notes"])
        let first = try Self.tandem(["schema", "check"] + remote + ["--candidate", v1])
        #expect(first.status == 0, "\(first.out)\(first.err)")
        #expect(first.err.contains("no schema version on the server yet"))

        let published = try Self.tandem(["schema", "publish"] + remote + ["--candidate", v1])
        #expect(published.status == 0, "\(published.out)\(published.err)")
        #expect(published.out.contains("published 'notes' schema version 1"))
        let again = try Self.tandem(["schema", "publish"] + remote + ["--candidate", v1, "--format", "json"])
        #expect(again.status == 0)
        #expect(again.out.contains("\"created\" : false") && again.out.contains("\"version\" : 1"), "\(again.out)")

        // The cases of an enum that is not CaseIterable are compared: each change has its rule.
        let added = try Self.tandem(["schema", "check"] + remote + ["--candidate", v2])
        #expect(added.status == 0, "a new case is a warning: \(added.out)")
        #expect(added.out.contains("ENUM_CASE_ADDED") && added.out.contains("Note.kind.four"))
        for (candidate, rule) in [(removed, "ENUM_CASE_REMOVED"), (renumbered, "ENUM_CASE_RAW_VALUE_CHANGED")] {
            let checked = try Self.tandem(["schema", "check"] + remote + ["--candidate", candidate, "--format", "github"])
            #expect(checked.status == 1, "\(checked.out)")
            #expect(checked.out.contains("::error") && checked.out.contains(rule), "\(checked.out)")
            let refused = try Self.tandem(["schema", "publish"] + remote + ["--candidate", candidate])
            #expect(refused.status == 1, "\(refused.out)\(refused.err)")
            #expect(refused.out.contains(rule), "the findings name the rule: \(refused.out)")
            #expect(refused.err.contains("the server refused the schema"))
        }
        #expect(try Self.versions(server, "notes") == [1], "nothing refused was registered")

        // A store whose models are the refused release: its sync's handshake is refused too,
        // naming the rule, and nothing is registered.
        let extracted = directory.appending(path: "removed.json").path(percentEncoded: false)
        #expect(try Self.tandem(["schema", "extract", removed, "-o", extracted]).status == 0)
        let store = directory.appending(path: "removed.store").path(percentEncoded: false)
        #expect(try Self.tandem(["init", "--store", store, "--schema", extracted, "--dataset", "notes"]).status == 0)
        let sync = try Self.tandem(["sync", "--store", store, "--server", server.base, "--token-file", tokenFile])
        #expect(sync.status == 1, "\(sync.out)\(sync.err)")
        #expect(sync.err.contains("ENUM_CASE_REMOVED"), "\(sync.err)")
        #expect(try Self.versions(server, "notes") == [1])

        // A store that records the schema as a running app does (the enum's cases unknown)
        // syncs as the published version 1: nothing new is registered.
        let published1 = directory.appending(path: "v1.json").path(percentEncoded: false)
        #expect(try Self.tandem(["schema", "extract", v1, "-o", published1]).status == 0)
        var json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(filePath: published1))) as? [String: Any])
        var entities = try #require(json["entities"] as? [[String: Any]])
        var attributes = try #require(entities[0]["attributes"] as? [[String: Any]])
        let kindIndex = try #require(attributes.firstIndex { $0["name"] as? String == "kind" })
        var type = try #require(attributes[kindIndex]["type"] as? [String: Any])
        var enumeration = try #require(type["enumeration"] as? [String: Any])
        #expect(enumeration["cases"] != nil, "the sources list the cases")
        enumeration.removeValue(forKey: "cases")
        type["enumeration"] = enumeration
        attributes[kindIndex]["type"] = type
        entities[0]["attributes"] = attributes
        json["entities"] = entities
        let running = directory.appending(path: "running.json")
        try JSONSerialization.data(withJSONObject: json).write(to: running)
        let appStore = directory.appending(path: "app.store").path(percentEncoded: false)
        let made = try Self.tandem(["init", "--store", appStore, "--schema", running.path(percentEncoded: false), "--dataset", "notes"])
        #expect(made.status == 0, "\(made.err)")
        let appSync = try Self.tandem(["sync", "--store", appStore, "--server", server.base, "--token-file", tokenFile])
        #expect(appSync.status == 0, "\(appSync.out)\(appSync.err)")
        #expect(try Self.versions(server, "notes") == [1])

        // A release that only adds a case: the app (its cases unknown) may be either version,
        // so it shows the cases both list, and keeps a value of the new one aside.
        let v1four = try Self.release(directory, "v1four", Self.models("", "case one, two, three, four"))
        let addedCase = try Self.tandem(["schema", "publish"] + remote + ["--candidate", v1four])
        #expect(addedCase.status == 0 && addedCase.out.contains("version 2"), "\(addedCase.out)\(addedCase.err)")
        let four = directory.appending(path: "v1four.json").path(percentEncoded: false)
        #expect(try Self.tandem(["schema", "extract", v1four, "-o", four]).status == 0)
        let writer = directory.appending(path: "writer.store").path(percentEncoded: false)
        #expect(try Self.tandem(["init", "--store", writer, "--schema", four, "--dataset", "notes"]).status == 0)
        let id3 = "00000000-0000-4000-8000-000000000003", id4 = "00000000-0000-4000-8000-000000000004"
        #expect(try Self.tandem(["records", "put", "--store", writer, "--entity", "Note", "--id", id3, #"{"title": "three", "kind": 2}"#]).status == 0)
        #expect(try Self.tandem(["records", "put", "--store", writer, "--entity", "Note", "--id", id4, #"{"title": "four", "kind": 3}"#]).status == 0)
        #expect(try Self.tandem(["sync", "--store", writer, "--server", server.base, "--token-file", tokenFile]).status == 0)
        let appPull = try Self.tandem(["sync", "--store", appStore, "--server", server.base, "--token-file", tokenFile])
        #expect(appPull.status == 0, "\(appPull.out)\(appPull.err)")
        #expect(appPull.out.contains("values of a newer schema kept"), "\(appPull.out)")
        let shown = try Self.tandem(["records", "get", "--store", appStore, "tandem://notes/Note/\(id3)"])
        #expect(shown.out.contains(#""kind" : 2"#) || shown.out.contains(#""kind":2"#), "a case both versions list is shown: \(shown.out)")
        let kept = try Self.tandem(["records", "get", "--store", appStore, "tandem://notes/Note/\(id4)"])
        #expect(kept.out.contains(#""kind" : 0"#) || kept.out.contains(#""kind":0"#), "the new case is kept, the first case shown meanwhile: \(kept.out)")

        // A fix on the older release: it is registered version 1, checked against it only.
        let older = try Self.tandem(["schema", "check"] + remote + ["--candidate", v1])
        #expect(older.status == 0, "\(older.out)\(older.err)")
        #expect(older.err.contains("the candidate is the server's version 1"), "\(older.err)")
        // Not a tandem-server at that URL (a wrong path): an error, not a pass.
        let wrongPath = try Self.tandem(["schema", "check", "--server", server.base + "/nope", "--dataset", "notes", "--token-file", tokenFile, "--candidate", v1])
        #expect(wrongPath.status == 2, "\(wrongPath.out)\(wrongPath.err)")

        // A server that does not answer: exit 3 (retry later), not a verdict.
        await server.stopped()
        let down = try Self.tandem(["schema", "check"] + remote + ["--candidate", v1])
        #expect(down.status == 3, "\(down.out)\(down.err)")
        #expect(down.err.contains("did not answer"))
    }

    @Test func badPipelineInputIsAnErrorThatSaysWhatToFix() throws {
        let both = try Self.tandem(["schema", "check", "--baseline", "a.json", "--server", "http://127.0.0.1:1", "--dataset", "d", "--candidate", "b.json"])
        #expect(both.status != 0 && both.err.contains("not both"), "\(both.err)")
        let neither = try Self.tandem(["schema", "check", "--candidate", "b.json"])
        #expect(neither.status != 0 && neither.err.contains("--baseline FILE|DIR, or --server URL"), "\(neither.err)")
        let noDataset = try Self.tandem(["schema", "publish", "--server", "http://127.0.0.1:1", "--candidate", "b.json"])
        #expect(noDataset.status != 0 && noDataset.err.contains("--dataset"), "\(noDataset.err)")
        // '..' is a path segment, not a dataset.
        let store = FileManager.default.temporaryDirectory.appending(path: "tandem-dots-\(UUID().uuidString).store").path(percentEncoded: false)
        let schema = FileManager.default.temporaryDirectory.appending(path: "tandem-dots-\(UUID().uuidString).json")
        try #"{"formatVersion":1,"entities":[{"name":"Note","attributes":[{"name":"t","isOptional":false,"type":{"kind":"scalar","scalar":"string"}}]}]}"#.write(
            to: schema, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: schema) }
        let dots = try Self.tandem(["init", "--store", store, "--schema", schema.path(percentEncoded: false), "--dataset", ".."])
        #expect(dots.status != 0 && dots.err.contains("not '.' or '..'"), "\(dots.err)")
    }
}

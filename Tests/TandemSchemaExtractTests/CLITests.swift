import Foundation
import Testing
import TandemSchema
import TandemSchemaTestSupport

/// The `tandem` executable, run as a process: exit codes, output formats, bad input.
@Suite("tandem schema (the CLI process)")
struct CLITests {
    /// The executable, built next to the test bundle by `swift build --build-tests`.
    static var tandemURL: URL? {
        var directory = URL(filePath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appending(path: "tandem")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }

    struct Run {
        var status: Int32
        var output: String
        var error: String
    }

    /// A scratch directory for one test.
    final class Workspace: Sendable {
        let url = FileManager.default.temporaryDirectory.appending(path: "tandem-cli-\(UUID().uuidString)")
        init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(at: url) }

        func path(_ name: String) -> String { url.appending(path: name).path(percentEncoded: false) }

        @discardableResult
        func write(_ name: String, _ text: String) throws -> String {
            let file = url.appending(path: name)
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: file)
            return file.path(percentEncoded: false)
        }

        func run(_ arguments: String...) throws -> Run {
            try run(arguments)
        }

        /// Writes `source` as a one-file source folder `name/Models.swift` and returns the folder.
        func sources(_ name: String, _ source: String) throws -> String {
            try write("\(name)/Models.swift", source)
            return path(name)
        }

        /// Extracts `source` into `name.json` with the CLI.
        func release(_ name: String, _ source: String) throws -> String {
            let folder = try sources("\(name)-src", source)
            let result = try run("schema", "extract", folder, "-o", path("\(name).json"))
            #expect(result.status == 0, "\(result.error)")
            return path("\(name).json")
        }
    }

    static let v1 = note(
        "var title: String = \"\"\nvar priority: Priority = .low",
        "enum Priority: String, Codable, CaseIterable { case low, high }")

    /// A schema JSON the server or a store would refuse is bad input here too (exit 2), with
    /// what is wrong: not a check that passes.
    @Test(arguments: [
        (#"{"kind":"enumeration","enumeration":{"typeName":"K","rawType":"int","cases":[{"name":"a","rawValue":"1"},{"name":"b","rawValue":"1"}]}}"#, "Note", "raw value '1' twice"),
        (#"{"kind":"enumeration","enumeration":{"typeName":"K","rawType":"int","cases":[{"name":"a","rawValue":"x"}]}}"#, "Note", "is not a int"),
        (#"{"kind":"scalar","scalar":"string"}"#, "tandem_x", "names starting with tandem_"),
    ])
    func aStructurallyBrokenSchemaIsBadInput(type: String, entity: String, problem: String) throws {
        let workspace = try Workspace()
        let json = try workspace.write(
            "bad.json", #"{"formatVersion":1,"entities":[{"name":"\#(entity)","attributes":[{"name":"k","isOptional":false,"type":\#(type)}]}]}"#)
        let result = try workspace.run("schema", "check", "--baseline", json, "--candidate", json)
        #expect(result.status == 2, "\(result.output)\(result.error)")
        #expect(result.error.contains(problem), "\(result.error)")
    }

    @Test func checkExitsZeroWhenCompatibleAndOneOnABreakingChangeNamingRuleAndLine() throws {
        let workspace = try Workspace()
        let baseline = try workspace.release("v1", Self.v1)
        let compatible = try workspace.sources(
            "ok",
            note(
                "var title: String = \"\"\nvar priority: Priority = .low\nvar body: String?",
                "enum Priority: String, Codable, CaseIterable { case low, high }"))
        let ok = try workspace.run("schema", "check", "--baseline", baseline, "--candidate", compatible)
        #expect(ok.status == 0, "\(ok.output)\(ok.error)")
        #expect(ok.output.contains("compatible"))
        // Every --baseline counts: a later one the candidate is compatible with does not hide an earlier one.
        let later = try workspace.release("v1b", note("var title: Int = 0\nvar priority: Priority = .low", "enum Priority: String, Codable, CaseIterable { case low, high }"))
        let both = try workspace.run("schema", "check", "--baseline", later, "--baseline", baseline, "--candidate", compatible)
        #expect(both.status == 1 && both.output.contains("ATTRIBUTE_TYPE_CHANGED"), "\(both.output)\(both.error)")

        let breaking = try workspace.sources(
            "bad",
            note(
                "var title: Int = 0\nvar priority: Priority = .low",
                "enum Priority: String, Codable, CaseIterable { case low, high }"))
        let failed = try workspace.run("schema", "check", "--baseline", baseline, "--candidate", breaking)
        #expect(failed.status == 1)
        #expect(failed.output.contains("ATTRIBUTE_TYPE_CHANGED"))
        #expect(failed.output.contains("Note.title"))
        #expect(failed.output.contains("bad/Models.swift:4"), "\(failed.output)")
        #expect(failed.output.contains("fix:"))
    }

    @Test func strictFailsOnWarnings() throws {
        let workspace = try Workspace()
        let baseline = try workspace.release("v1", Self.v1)
        let candidate = try workspace.sources(
            "c",
            note(
                "var title: String = \"\"\nvar priority: Priority = .low",
                "enum Priority: String, Codable, CaseIterable { case low, high, urgent }"))
        #expect(try workspace.run("schema", "check", "--baseline", baseline, "--candidate", candidate).status == 0)
        let strict = try workspace.run("schema", "check", "--baseline", baseline, "--candidate", candidate, "--strict")
        #expect(strict.status == 1)
        #expect(strict.output.contains("ENUM_CASE_ADDED"))
    }

    @Test func jsonFormatHasOneObjectPerFindingWithFileAndLine() throws {
        let workspace = try Workspace()
        let baseline = try workspace.release("v1", Self.v1)
        let candidate = try workspace.sources("c", note("var priority: Priority = .low", "enum Priority: String, Codable, CaseIterable { case low }"))
        let result = try workspace.run("schema", "check", "--baseline", baseline, "--candidate", candidate, "--format", "json")
        #expect(result.status == 1)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
        #expect(report["version"] as? Int == 1)
        #expect(report["compatible"] as? Bool == false)
        let findings = try #require(report["findings"] as? [[String: Any]])
        let rules = Set(findings.compactMap { $0["rule"] as? String })
        #expect(rules == ["ATTRIBUTE_REMOVED", "ENUM_CASE_REMOVED"])
        let removedCase = try #require(findings.first { $0["rule"] as? String == "ENUM_CASE_REMOVED" })
        #expect(removedCase["path"] as? String == "Note.priority.high")
        #expect(removedCase["verdict"] as? String == "breaking")
        #expect((removedCase["hint"] as? String)?.isEmpty == false)
        #expect((removedCase["file"] as? String)?.hasSuffix("c/Models.swift") == true)
        #expect(removedCase["line"] as? Int == 4)
    }

    @Test func githubFormatWritesWorkflowAnnotations() throws {
        let workspace = try Workspace()
        let baseline = try workspace.release("v1", Self.v1)
        let candidate = try workspace.sources(
            "c",
            note(
                "var title: String?\nvar priority: Priority = .low",
                "enum Priority: String, Codable, CaseIterable { case low, high }"))
        let result = try workspace.run("schema", "check", "--baseline", baseline, "--candidate", candidate, "--format", "github")
        #expect(result.status == 0, "a required-to-optional change with an old default is a warning")
        let line = try #require(result.output.split(separator: "\n").first.map(String.init))
        #expect(line.hasPrefix("::warning file="), "\(line)")
        #expect(line.contains(",line=4,title=ATTRIBUTE_REQUIRED_TO_OPTIONAL Note.title::Note.title: "))
    }

    @Test func aDirectoryOfReleasedSchemasIsCheckedTransitively() throws {
        let workspace = try Workspace()
        try FileManager.default.createDirectory(atPath: workspace.path("released"), withIntermediateDirectories: true)
        let v1 = try workspace.release("v1", note("var title: String = \"\""))
        let v2 = try workspace.release("v2", note("var title: String = \"\"\nvar body: String?"))
        try FileManager.default.copyItem(atPath: v1, toPath: workspace.path("released/1.json"))
        try FileManager.default.copyItem(atPath: v2, toPath: workspace.path("released/2.json"))
        // Compatible with 1.json (an optional attribute added), not with 2.json (body retyped).
        let candidate = try workspace.sources("c", note("var title: String = \"\"\nvar body: Int?"))
        let result = try workspace.run("schema", "check", "--baseline", workspace.path("released"), "--candidate", candidate, "--format", "json")
        #expect(result.status == 1)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
        let findings = try #require(report["findings"] as? [[String: Any]])
        let retyped = try #require(findings.first { $0["rule"] as? String == "ATTRIBUTE_TYPE_CHANGED" })
        #expect(retyped["baselines"] as? [String] == ["2.json"])
    }

    @Test func anIgnoreFileAndAnAllowCommentSilenceReviewedFindings() throws {
        let workspace = try Workspace()
        let baseline = try workspace.release("v1", Self.v1)
        let candidate = try workspace.sources(
            "c",
            note(
                """
                // tandem:allow ATTRIBUTE_TYPE_CHANGED titles are re-parsed by every client version
                var title: Int = 0
                var priority: Priority = .low
                """, "enum Priority: String, Codable, CaseIterable { case low }"))
        let before = try workspace.run("schema", "check", "--baseline", baseline, "--candidate", candidate)
        #expect(before.status == 1)
        #expect(before.output.contains("ENUM_CASE_REMOVED"))
        #expect(before.output.contains("IGNORED (1)"))
        try workspace.write(
            ".tandem-schema.json",
            """
            {"version": 1, "ignore": [{"rule": "ENUM_CASE_REMOVED", "path": "Note.priority", "reason": "high was never released"}]}
            """)
        let after = try workspace.run("schema", "check", "--baseline", baseline, "--candidate", candidate)
        #expect(after.status == 0, "\(after.output)")
        #expect(after.output.contains("high was never released"))
        #expect(after.output.contains("titles are re-parsed"))
    }

    @Test func diffListsSafeChangesAndRulesListsEveryRule() throws {
        let workspace = try Workspace()
        let baseline = try workspace.release("v1", Self.v1)
        let candidate = try workspace.sources(
            "c",
            note(
                "var title: String = \"\"\nvar priority: Priority = .low\nvar body: String?",
                "enum Priority: String, Codable, CaseIterable { case low, high }"))
        let diff = try workspace.run("schema", "diff", "--baseline", baseline, "--candidate", candidate)
        #expect(diff.status == 0)
        #expect(diff.output.contains("ATTRIBUTE_ADDED_OPTIONAL"))
        let rules = try workspace.run("schema", "rules", "--format", "json")
        let list = try #require(try JSONSerialization.jsonObject(with: Data(rules.output.utf8)) as? [[String: Any]])
        #expect(list.count == CompatibilityRule.all.count)
        #expect(list.allSatisfy { ($0["rationale"] as? String)?.isEmpty == false && $0["verdict"] != nil })
    }

    /// Bad input: exit 2, a message naming the file (and line), never a crash or exit 0.
    @Test func badInputExitsTwoWithAMessageNamingTheFile() throws {
        let workspace = try Workspace()
        let baseline = try workspace.release("v1", Self.v1)
        let good = try workspace.sources("good", Self.v1)
        let malformed = try workspace.write("malformed.json", "{\"formatVersion\": 1, \"entities\": [")
        let future = try workspace.write("future.json", "{\"formatVersion\": 99, \"entities\": []}")
        let wrongType = try workspace.write("wrong.json", "{\"formatVersion\": 1, \"entities\": [{\"name\": 3, \"attributes\": []}]}")
        let syntax = try workspace.sources("syntax", "@Model final class Note {\n    var title: String = \"\"\n    var broken: = 3\n}")
        let unknownType = try workspace.sources("unknown", note("var money: Money"))
        let noModels = try workspace.sources("empty", "struct Plain {}")
        try workspace.write("bad-ignore/.tandem-schema.json", "{\"version\": 1, \"ignore\": [{\"rule\": \"ENUM_CASE_ADDED\", \"path\": \"Note\"}]}")
        let badComment = try workspace.sources("comment", note("// tandem:allow NOT_A_RULE because\nvar title: String = \"\""))
        let unreadable = try workspace.write("unreadable.json", "{}")
        try FileManager.default.setAttributes([.posixPermissions: 0], ofItemAtPath: unreadable)

        let cases: [(arguments: [String], mentions: [String])] = [
            (["schema", "check", "--baseline", malformed, "--candidate", good], ["malformed.json", "line 1"]),
            (["schema", "check", "--baseline", future, "--candidate", good], ["future.json", "formatVersion 99"]),
            (["schema", "check", "--baseline", wrongType, "--candidate", good], ["wrong.json", "entities[0].name"]),
            (["schema", "check", "--baseline", workspace.path("missing.json"), "--candidate", good], ["missing.json", "no such file"]),
            (["schema", "check", "--baseline", baseline, "--candidate", syntax], ["syntax/Models.swift:3"]),
            (["schema", "check", "--baseline", baseline, "--candidate", unknownType], ["Money", "unknown/Models.swift:4", "--types"]),
            (["schema", "extract", noModels], ["no @Model classes"]),
            (["schema", "check", "--baseline", baseline, "--candidate", good, "--config", workspace.path("bad-ignore/.tandem-schema.json")], ["needs a \"reason\""]),
            (["schema", "check", "--baseline", baseline, "--candidate", badComment], ["comment/Models.swift:5", "NOT_A_RULE"]),
            (["schema", "check", "--baseline", baseline, "--candidate", good, "--format", "xml"], ["xml"]),
            (["schema", "check", "--candidate", good], ["--baseline"]),
            (["schema", "nonsense"], ["nonsense"]),
        ]
        for (arguments, mentions) in cases {
            let result = try workspace.run(arguments)
            #expect(result.status == 2, "\(arguments) exited \(result.status): \(result.output)\(result.error)")
            for mention in mentions {
                #expect(result.error.contains(mention), "\(arguments): stderr \(result.error)")
            }
        }
        if getuid() != 0 {
            let result = try workspace.run(["schema", "check", "--baseline", unreadable, "--candidate", good])
            #expect(result.status == 2 && result.error.contains("unreadable.json"))
        }
    }
}

extension CLITests.Workspace {
    func run(_ arguments: [String]) throws -> CLITests.Run {
        let executable = try #require(CLITests.tandemURL, "tandem is not built")
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = url
        var environment = ProcessInfo.processInfo.environment
        environment["NO_COLOR"] = "1"
        process.environment = environment
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let error = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return CLITests.Run(status: process.terminationStatus, output: String(decoding: output, as: UTF8.self), error: String(decoding: error, as: UTF8.self))
    }
}

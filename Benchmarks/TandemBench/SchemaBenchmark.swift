import Tandem

/// `tandem schema check` on two generated 1 000-entity schemas and `tandem schema extract` on
/// 200 generated model files, each timed as a whole process (start to exit), next to the
/// floor of starting the same binary (`tandem schema rules --format json`).
struct SchemaBenchmark {
    var entities = 1_000
    var attributes = 20
    var files = 200
    var runs: Int
    var scratch: Scratch

    /// The `tandem` executable built next to this one (`swift build -c release --product tandem`).
    static func tandemExecutable() throws -> String {
        let url = URL(filePath: CommandLine.arguments[0]).deletingLastPathComponent().appending(path: "tandem")
        let path = url.path(percentEncoded: false)
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw BenchError("\(path) is missing: build it with `swift build -c release --product tandem` (Scripts/bench.sh does)")
        }
        return path
    }

    func run(into report: inout Report) throws {
        let tandem = try Self.tandemExecutable()
        let directory = scratch.directory.appending(path: "schema")
        let sources = directory.appending(path: "Sources")
        try FileManager.default.createDirectory(at: sources, withIntermediateDirectories: true)
        let v1 = directory.appending(path: "v1.json").path(percentEncoded: false)
        let v2 = directory.appending(path: "v2.json").path(percentEncoded: false)
        try generatedSchema(changed: false).canonicalJSON().write(to: URL(filePath: v1))
        try generatedSchema(changed: true).canonicalJSON().write(to: URL(filePath: v2))
        for index in 0..<files {
            try Data(modelSource(index).utf8).write(to: sources.appending(path: "Model\(index).swift"))
        }
        let output = directory.appending(path: "extracted.json").path(percentEncoded: false)

        var floor = Measurement("tandem start (schema rules)")
        var check = Measurement("tandem schema check")
        var extract = Measurement("tandem schema extract")
        for round in 0...runs {
            let start = try time(tandem, ["schema", "rules", "--format", "json"], expecting: 0)
            let checked = try time(tandem, ["schema", "check", "--baseline", v1, "--candidate", v2, "--format", "json"], expecting: 1)
            let extracted = try time(tandem, ["schema", "extract", sources.path(percentEncoded: false), "-o", output], expecting: 0)
            if round > 0 {
                floor.samples.append(start)
                check.samples.append(checked)
                extract.samples.append(extracted)
            }
        }
        let extractedSchema = try Schema(canonicalJSON: Data(contentsOf: URL(filePath: output)))
        guard extractedSchema.entities.count == files else {
            throw BenchError("extract found \(extractedSchema.entities.count) entities in \(files) files")
        }
        report.comparisons.append(
            Comparison(
                operation: "schema check, 2 × \(entities) entities × \(attributes) attributes (process)",
                tandem: check, competitor: floor, target: .timeAtMost(.milliseconds(200))))
        report.comparisons.append(
            Comparison(
                operation: "schema extract, \(files) model files (process)",
                tandem: extract, competitor: floor, target: .timeAtMost(.seconds(2))))
        report.measurements += [floor, check, extract].map { $0.labelled("schema") }
        report.measurements += try inProcessChecks().map { $0.labelled("schema") }
    }

    /// The compatibility check as the server runs it when a schema is registered (in process,
    /// against every earlier version): one entity of N optional attributes, then N + 1, for
    /// N from 2 000 to 20 000 (it should grow about linearly), and the generated 1 000 × 20
    /// schema against 20 earlier versions.
    private func inProcessChecks() throws -> [Measurement] {
        func entity(_ count: Int) -> Schema {
            Schema(entities: [
                Schema.Entity(
                    name: "Wide", attributes: (0..<count).map { Schema.Attribute(name: "a\($0)", type: .scalar(.string), isOptional: true) })
            ])
        }
        var measurements: [Measurement] = []
        for count in [2_000, 5_000, 10_000, 20_000] {
            var measurement = Measurement("server check, 1 entity × \(count) attributes + 1")
            let (baseline, candidate) = (entity(count), entity(count + 1))
            for _ in 0..<max(runs, 1) {
                let (elapsed, report) = try Stopwatch.time {
                    CompatibilityCheck().run(baselines: [.init(name: "v1", schema: baseline)], candidate: candidate)
                }
                guard report.isCompatible else { throw BenchError("adding an optional attribute was refused") }
                measurement.samples.append(elapsed)
            }
            measurements.append(measurement)
        }
        var versions = Measurement("server check, \(entities) entities × \(attributes) attributes against 20 versions")
        let history = (0..<20).map { CompatibilityCheck.Baseline(name: "v\($0)", schema: generatedSchema(changed: false)) }
        let candidate = generatedSchema(changed: true)
        for _ in 0..<max(runs, 1) {
            let (elapsed, _) = try Stopwatch.time { CompatibilityCheck().run(baselines: history, candidate: candidate) }
            versions.samples.append(elapsed)
        }
        measurements.append(versions)
        return measurements
    }

    /// Runs a process to its exit and returns the wall time; a different exit code is an error.
    private func time(_ executable: String, _ arguments: [String], expecting status: Int32) throws -> Duration {
        let process = Process()
        process.executableURL = URL(filePath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        let (elapsed, _) = try Stopwatch.time {
            try process.run()
            process.waitUntilExit()
        }
        guard process.terminationStatus == status else {
            throw BenchError("tandem \(arguments.joined(separator: " ")) exited \(process.terminationStatus), expected \(status)")
        }
        return elapsed
    }

    /// Entities with a mix of every storage shape and a relationship; `changed` adds an
    /// optional attribute to every entity, a case to every tenth enum and removes an
    /// attribute from every fiftieth entity (so the check has findings of every verdict).
    private func generatedSchema(changed: Bool) -> Schema {
        Schema(
            entities: (0..<entities).map { index in
                var attributes: [Schema.Attribute] = (0..<attributes).map { a in
                    let name = "field\(a)"
                    switch a % 6 {
                    case 0: return Schema.Attribute(name: name, type: .scalar(.string))
                    case 1: return Schema.Attribute(name: name, type: .scalar(.int), defaultValue: "0")
                    case 2: return Schema.Attribute(name: name, type: .scalar(.date), isOptional: true)
                    case 3:
                        var cases = ["low", "normal", "high"].enumerated().map { Schema.Enumeration.Case(name: $1, rawValue: String($0)) }
                        if changed && index % 10 == 0 { cases.append(.init(name: "urgent", rawValue: "3")) }
                        return Schema.Attribute(name: name, type: .enumeration(.init(typeName: "Level", rawType: .int, cases: cases)))
                    case 4:
                        return Schema.Attribute(
                            name: name,
                            type: .composite(
                                .init(
                                    typeName: "Part",
                                    fields: [
                                        .init(name: "label", type: .scalar(.string)), .init(name: "count", type: .scalar(.int)),
                                        .init(name: "note", type: .scalar(.string), isOptional: true),
                                    ])))
                    default: return Schema.Attribute(name: name, type: .collection(typeName: "Array<String>", element: .scalar(.string)))
                    }
                }
                if changed {
                    attributes.append(Schema.Attribute(name: "added", type: .scalar(.string), isOptional: true))
                    if index % 50 == 0 { attributes.removeFirst() }
                }
                let next = "Entity\((index + 1) % entities)"
                return Schema.Entity(
                    name: "Entity\(index)", attributes: attributes,
                    relationships: [Schema.Relationship(name: "next", destination: next, cardinality: .toOne)])
            })
    }

    /// One model file: a `@Model` class of `attributes` properties, a composite and an enum.
    private func modelSource(_ index: Int) -> String {
        var properties: [String] = []
        for a in 0..<attributes {
            switch a % 5 {
            case 0: properties.append("    @Attribute(.unique) var code\(a): String")
            case 1: properties.append("    var count\(a): Int = 0")
            case 2: properties.append("    var part\(a): Part\(index)")
            case 3: properties.append("    var kind\(a): Kind\(index) = .low")
            default: properties.append("    var tags\(a): [String] = []")
            }
        }
        return """
            import Foundation
            import Tandem

            struct Part\(index): Codable, Hashable {
                var label: String
                var count: Int
                var note: String?
            }

            enum Kind\(index): String, Codable, CaseIterable {
                case low, normal, high = "HIGH"
            }

            /// Generated model \(index).
            @Model final class Model\(index) {
            \(properties.joined(separator: "\n"))
                var next: Model\((index + 1) % files)?

                init() {}
            }

            """
    }
}

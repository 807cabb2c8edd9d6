import Foundation
import TandemLocking
import TandemSchema
import TandemSchemaExtract

/// Reads what the schema commands are given: schema JSON files, directories of released
/// schemas, Swift sources, ignore files and `--types` hints. Every failure is a ``CLIError``
/// naming the file.
enum SchemaInputs {
    /// A candidate: its schema, and where its declarations are when read from sources.
    struct Candidate {
        var schema: Schema
        var locations: [String: SourceLocation] = [:]
        var allowances: [SchemaAllowance] = []
    }

    static func isDirectory(_ path: String) -> Bool {
        var directory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &directory) && directory.boolValue
    }

    static func read(_ path: String) throws -> Data {
        guard FileManager.default.fileExists(atPath: path) else { throw CLIError("\(path): no such file or directory") }
        guard let data = FileManager.default.contents(atPath: path) else { throw CLIError("\(path): cannot be read (check its permissions)") }
        return data
    }

    /// A schema JSON file.
    static func schema(at path: String) throws -> Schema {
        do {
            let schema = try Schema(canonicalJSON: try read(path))
            // What the server and a store would refuse, refused here too (exit 2).
            if let problem = schema.structuralProblem { throw CLIError("\(path): \(problem)") }
            return schema
        } catch let error as SchemaError {
            throw CLIError("\(path): \(error.message)")
        } catch let error as CLIError {
            throw error
        } catch {
            throw CLIError("\(path): not a schema JSON file: \(error.localizedDescription)")
        }
    }

    /// Runs `background` on another thread while `foreground` runs on this one (whose stack
    /// is the main thread's: parsing deeply nested Swift sources needs it); the first error
    /// (of `background`, then `foreground`) is thrown.
    static func concurrently<A: Sendable, B>(_ background: @escaping @Sendable () throws -> A, _ foreground: () throws -> B) throws -> (A, B) {
        let result = Locked<Result<A, any Error>?>(nil)
        let done = DispatchGroup()
        done.enter()
        DispatchQueue.global().async {
            let value = Result { try background() }
            result.withLock { $0 = value }
            done.leave()
        }
        let second = Result { try foreground() }
        done.wait()
        let first = result.withLock { $0 }!
        return (try first.get(), try second.get())
    }

    /// One JSON file, or every `*.json` file of a directory (sorted by name), read in parallel.
    static func baselines(at path: String) throws -> [CompatibilityCheck.Baseline] {
        if isDirectory(path) {
            let names = try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") }.sorted()
            guard !names.isEmpty else { throw CLIError("\(path): the baseline directory holds no .json schema files") }
            let loaded = Locked<[Int: Result<Schema, any Error>]>([:])
            DispatchQueue.concurrentPerform(iterations: names.count) { index in
                let result = Result { try schema(at: (path as NSString).appendingPathComponent(names[index])) }
                loaded.withLock { $0[index] = result }
            }
            let results = loaded.withLock { $0 }
            return try names.indices.map { CompatibilityCheck.Baseline(name: names[$0], schema: try results[$0]!.get()) }
        }
        return [CompatibilityCheck.Baseline(name: (path as NSString).lastPathComponent, schema: try schema(at: path))]
    }

    /// A schema JSON file, or Swift sources (a directory or `.swift` files) to extract.
    static func candidate(at paths: [String], typesFile: String?, scope: String?) throws -> Candidate {
        if paths.count == 1, paths[0].hasSuffix(".json"), !isDirectory(paths[0]) {
            return Candidate(schema: try schema(at: paths[0]))
        }
        let extracted = try extract(paths, typesFile: typesFile, scope: scope)
        return Candidate(schema: extracted.schema, locations: extracted.locations, allowances: extracted.allowances)
    }

    /// Extracts the schema of the `@Model` classes in `paths` (directories are searched
    /// recursively for `.swift` files, skipping hidden and `.build` folders).
    static func extract(_ paths: [String], typesFile: String?, scope: String?) throws -> ExtractedSchema {
        var sources: [SourceText] = []
        for path in paths {
            for file in try swiftFiles(at: path) {
                guard let text = String(data: try read(file), encoding: .utf8) else {
                    throw CLIError("\(file): not UTF-8 text")
                }
                sources.append(SourceText(path: file, text: text))
            }
        }
        guard !sources.isEmpty else { throw CLIError("\(paths.joined(separator: ", ")): no .swift files found") }
        let extractor = SchemaExtractor(typeHints: try typesFile.map(typeHints) ?? [:], scope: scope)
        do {
            let extracted = try extractor.extract(sources)
            guard !extracted.schema.entities.isEmpty else {
                throw CLIError("\(paths.joined(separator: ", ")): no @Model classes found in \(sources.count) Swift file(s)")
            }
            // What the server and a store would refuse, refused here too.
            if let problem = extracted.schema.structuralProblem { throw CLIError("\(paths.joined(separator: ", ")): \(problem)") }
            return extracted
        } catch let error as SchemaError {
            throw CLIError(error.message)
        }
    }

    private static func swiftFiles(at path: String) throws -> [String] {
        guard FileManager.default.fileExists(atPath: path) else { throw CLIError("\(path): no such file or directory") }
        guard isDirectory(path) else {
            guard path.hasSuffix(".swift") else { throw CLIError("\(path): expected a .swift file or a directory of them") }
            return [path]
        }
        var files: [String] = []
        guard let enumerator = FileManager.default.enumerator(atPath: path) else { throw CLIError("\(path): cannot be listed") }
        while let relative = enumerator.nextObject() as? String {
            let name = (relative as NSString).lastPathComponent
            if name.hasPrefix(".") || name == ".build" {
                enumerator.skipDescendants()
                continue
            }
            if relative.hasSuffix(".swift") { files.append((path as NSString).appendingPathComponent(relative)) }
        }
        return files.sorted()
    }

    /// A `--types` file: `{"Money": {"kind": "scalar", "scalar": "decimal"}, …}`, each value
    /// an attribute type as written in schema JSON.
    static func typeHints(_ path: String) throws -> [String: Schema.AttributeType] {
        do {
            return try JSONDecoder().decode([String: Schema.AttributeType].self, from: try read(path))
        } catch let error as CLIError {
            throw error
        } catch {
            throw CLIError("\(path): not a --types file (expected {\"TypeName\": {\"kind\": \"scalar\", \"scalar\": \"decimal\"}, …}): \(error)")
        }
    }

    /// The ignore file: `--config`, else `.tandem-schema.json` in the current directory if present.
    static func ignores(_ path: String?) throws -> CompatibilityIgnores {
        let file = path ?? ".tandem-schema.json"
        if path == nil && !FileManager.default.fileExists(atPath: file) { return CompatibilityIgnores() }
        do {
            return try CompatibilityIgnores(json: try read(file), file: file)
        } catch let error as SchemaError {
            throw CLIError(error.message)
        }
    }
}

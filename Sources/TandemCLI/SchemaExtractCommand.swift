import ArgumentParser
import Foundation
import TandemSchema

/// `tandem schema extract <paths…> [-o schema.json]`.
struct SchemaExtractCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "extract",
        abstract: "Read @Model classes from Swift sources and write the canonical schema JSON, without building the app.")

    @Argument(help: "Swift files or directories (searched recursively).")
    var paths: [String]

    @Option(name: .shortAndLong, help: "Write the schema here instead of standard output.")
    var output: String?

    @Option(help: "A JSON file describing the storage of types the sources do not define: {\"Money\": {\"kind\": \"scalar\", \"scalar\": \"decimal\"}}.")
    var types: String?

    @Option(help: "Only the models nested in this type (a versioned schema's `enum V2`), plus top-level ones.")
    var scope: String?

    func run() throws {
        let extracted = try SchemaInputs.extract(paths, typesFile: types, scope: scope)
        var json = try extracted.schema.canonicalJSON()
        json.append(UInt8(ascii: "\n"))
        if let output {
            do { try json.write(to: URL(filePath: output), options: .atomic) } catch {
                throw CLIError("\(output): cannot be written: \(error.localizedDescription)")
            }
        } else {
            FileHandle.standardOutput.write(json)
        }
    }
}

import ArgumentParser
import Foundation
import Tandem
import TandemSchema

/// `tandem init --store FILE --schema schema.json [--dataset NAME]`.
struct InitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Create a store (or migrate an existing one) from a schema JSON file.",
        discussion: "The schema is what `tandem schema extract` writes. The dataset names the store's records (tandem://DATASET/Entity/uuid) and cannot change later.")

    @Option(help: "The store file to create.") var store: String
    @Option(help: "The schema JSON file.") var schema: String
    @Option(help: "The dataset (letters, digits, '-', '_', '.'); 'default' when omitted.") var dataset: String?

    func run() throws {
        let schema = try SchemaInputs.schema(at: schema)
        do {
            let container = try ModelContainer(schema: schema, configuration: ModelConfiguration(url: URL(filePath: store), dataset: dataset))
            print("\(store): dataset '\(container.dataset)', \(schema.entities.count) entities (\(schema.entities.map(\.name).joined(separator: ", ")))")
        } catch let error as StoreError {
            throw CLIError("\(store): \(error.message)")
        }
    }
}

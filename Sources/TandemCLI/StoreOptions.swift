import ArgumentParser
import Foundation
import Tandem
import TandemSchema

/// `--store FILE`: an existing store, opened with the schema it stores.
struct StoreOptions: ParsableArguments {
    @Option(help: "The store file (TANDEM_STORE).") var store: String?

    var path: String {
        get throws {
            guard let path = store ?? ProcessInfo.processInfo.environment["TANDEM_STORE"], !path.isEmpty else {
                throw CLIError("no store: pass --store FILE or set TANDEM_STORE")
            }
            return path
        }
    }

    func open() throws -> ModelContainer {
        let path = try self.path
        do {
            return try ModelContainer(contentsOf: URL(filePath: path))
        } catch let error as StoreError {
            throw CLIError("\(path): \(error.message)")
        }
    }
}

/// Where the server is and how to authenticate: flags, then environment variables, then the
/// config file (`--config`, or `TANDEM_CONFIG`: a JSON object with `server`, `dataset`,
/// `tokenFile`). The token never comes from the command line.
struct ServerOptions: ParsableArguments {
    @Option(help: "The server URL (TANDEM_SERVER), like http://127.0.0.1:8080.") var server: String?
    @Option(help: "The dataset (TANDEM_DATASET); the store's own by default.") var dataset: String?
    @Option(help: "A file holding the token (TANDEM_TOKEN_FILE); or set TANDEM_TOKEN.") var tokenFile: String?
    @Option(help: "A JSON config file with server, dataset and tokenFile (TANDEM_CONFIG).") var config: String?

    struct FileConfig: Decodable {
        var server: String?
        var dataset: String?
        var tokenFile: String?
    }

    func fileConfig() throws -> FileConfig {
        guard let path = config ?? ProcessInfo.processInfo.environment["TANDEM_CONFIG"] else { return FileConfig() }
        let data = try SchemaInputs.read(path)
        do { return try JSONDecoder().decode(FileConfig.self, from: data) } catch {
            throw CLIError("\(path): not a config file (a JSON object with server, dataset, tokenFile): \(error)")
        }
    }

    func resolved() throws -> (server: String, dataset: String?, token: @Sendable () throws -> String) {
        let environment = ProcessInfo.processInfo.environment
        let file = try fileConfig()
        guard let server = server ?? environment["TANDEM_SERVER"] ?? file.server else {
            throw CLIError("no server: pass --server URL, set TANDEM_SERVER, or put \"server\" in the config file")
        }
        let tokenPath = tokenFile ?? environment["TANDEM_TOKEN_FILE"] ?? file.tokenFile
        let inline = environment["TANDEM_TOKEN"]
        guard tokenPath != nil || inline != nil else {
            throw CLIError("no token: pass --token-file FILE, set TANDEM_TOKEN_FILE or TANDEM_TOKEN (create one with tandem-server tokens create NAME)")
        }
        let token: @Sendable () throws -> String = {
            if let tokenPath {
                guard let data = FileManager.default.contents(atPath: tokenPath) else {
                    throw CLIError("\(tokenPath): the token file cannot be read")
                }
                return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            }
            return inline ?? ""
        }
        return (server, dataset ?? environment["TANDEM_DATASET"] ?? file.dataset, token)
    }
}

/// Prints JSON to standard output (sorted keys, one document).
func printJSON(_ value: some Encodable, pretty: Bool = true) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
    print(String(decoding: try encoder.encode(value), as: UTF8.self))
}

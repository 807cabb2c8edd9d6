import ArgumentParser
import Foundation
import Tandem
import TandemSchema
import TandemSync

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
/// `tokenFile`, and the sync's `conflictPolicies` and `updateWinsOverDelete`). The token never comes from the command line.
struct ServerOptions: ParsableArguments {
    @Option(help: "The server URL (TANDEM_SERVER), like http://127.0.0.1:8080.") var server: String?
    @Option(help: "The dataset (TANDEM_DATASET): the store's own by default, or OWNER/NAME for one shared with you (NAME being the store's dataset).") var dataset: String?
    @Option(help: "A file holding the token (TANDEM_TOKEN_FILE); or set TANDEM_TOKEN.") var tokenFile: String?
    @Option(help: "A JSON config file with server, dataset, tokenFile, conflictPolicies ({\"Todo.title\": \"serverWins\"}) and updateWinsOverDelete ([\"Note\"]) (TANDEM_CONFIG).") var config: String?

    struct FileConfig: Decodable {
        var server: String?
        var dataset: String?
        var tokenFile: String?
        /// `{"Todo.title": "serverWins", "Todo": "clientWins"}`: per attribute or per entity.
        var conflictPolicies: [String: String]?
        /// Entities whose records an unpushed edit brings back from a pulled delete.
        var updateWinsOverDelete: [String]?
    }

    /// The sync configuration: the dataset, the token, and the config file's conflict
    /// policies checked against the store's schema (a misspelt entity or policy is an error,
    /// never a policy silently not applied).
    func syncConfiguration(for container: ModelContainer) throws -> (server: String, configuration: SyncConfiguration) {
        let (url, dataset, token) = try resolved()
        var configuration = SyncConfiguration(dataset: dataset, token: { try token() })
        let file = try fileConfig()
        let path = config ?? ProcessInfo.processInfo.environment["TANDEM_CONFIG"] ?? "the config file"
        for (key, name) in file.conflictPolicies ?? [:] {
            let policy: ConflictPolicy
            switch name {
            case "lastWriterWins": policy = .lastWriterWins
            case "serverWins": policy = .serverWins
            case "clientWins": policy = .clientWins
            default: throw CLIError("\(path): conflictPolicies.\(key) is '\(name)'; use lastWriterWins, serverWins or clientWins")
            }
            let parts = key.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            guard !key.isEmpty, let entity = container.schema.entity(named: container.declaredSchema.storedEntityName(parts[0])) else {
                throw CLIError(
                    "\(path): conflictPolicies names entity '\(parts[0])', which the store's schema does not have (it has \(container.declaredSchema.entities.map(\.name).sorted().joined(separator: ", ")))"
                )
            }
            if parts.count == 2, !entity.columns.contains(where: { $0.name == parts[1] }) {
                throw CLIError(
                    "\(path): conflictPolicies names '\(key)'; '\(parts[0])' has no column '\(parts[1])' (columns: \(entity.columns.filter { $0.role != .primaryKey }.map(\.name).sorted().joined(separator: ", ")))"
                )
            }
            configuration.conflictPolicies[key] = policy
        }
        for name in file.updateWinsOverDelete ?? [] {
            guard container.schema.entity(named: container.declaredSchema.storedEntityName(name)) != nil else {
                throw CLIError("\(path): updateWinsOverDelete names entity '\(name)', which the store's schema does not have")
            }
            configuration.updateWinsOverDelete.insert(name)
        }
        return (url, configuration)
    }

    /// The config file's settings (none without one). A key it does not know is an error
    /// (a misspelt `tokenfile` would otherwise surface later as "no token"); a relative
    /// `tokenFile` is of the config file's directory, not the one the command runs in.
    func fileConfig() throws -> FileConfig {
        guard let path = config ?? ProcessInfo.processInfo.environment["TANDEM_CONFIG"] else { return FileConfig() }
        let data = try SchemaInputs.read(path)
        var file: FileConfig
        do { file = try JSONDecoder().decode(FileConfig.self, from: data) } catch {
            throw CLIError("\(path): not a config file (a JSON object with server, dataset, tokenFile): \(error)")
        }
        if let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] {
            let unknown = Set(object.keys).subtracting(Self.configKeys)
            if !unknown.isEmpty {
                throw CLIError(
                    "\(path): unknown setting\(unknown.count == 1 ? "" : "s") \(unknown.sorted().map { "'\($0)'" }.joined(separator: ", ")); a config file has \(Self.configKeys.joined(separator: ", "))"
                )
            }
        }
        if let tokenFile = file.tokenFile, !tokenFile.isEmpty, !tokenFile.hasPrefix("/"), path != "-" {
            file.tokenFile = URL(filePath: path).deletingLastPathComponent().appending(path: tokenFile).path(percentEncoded: false)
        }
        return file
    }

    /// The settings a config file may have.
    static let configKeys = ["server", "dataset", "tokenFile", "conflictPolicies", "updateWinsOverDelete"]

    /// Reads the token: from `file` (`--token-file`), else `TANDEM_TOKEN_FILE`, else
    /// `configured` (the config file's), else `TANDEM_TOKEN`; read again at each call.
    ///
    /// - Throws: ``CLIError`` when none is set (and, from the reader, when the file cannot
    ///   be read or is empty).
    static func token(file: String?, configured: String? = nil) throws -> @Sendable () throws -> String {
        let environment = ProcessInfo.processInfo.environment
        // An empty setting is no setting (`TANDEM_TOKEN_FILE=` in a unit file, say).
        let tokenPath = [file, environment["TANDEM_TOKEN_FILE"], configured].lazy.compactMap { $0 }.first { !$0.isEmpty }
        let inline = environment["TANDEM_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        guard tokenPath != nil || inline != nil else {
            throw CLIError("no token: pass --token-file FILE, set TANDEM_TOKEN_FILE or TANDEM_TOKEN (create one with tandem-server tokens create NAME)")
        }
        return {
            if let tokenPath {
                // A token is a line: a file of more than 64 KiB is not one (libcurl would fail
                // on the header with "out of memory", a retry-later exit).
                let resolved = URL(filePath: tokenPath).resolvingSymlinksInPath().path(percentEncoded: false)  // a mounted secret is a link
                if let size = (try? FileManager.default.attributesOfItem(atPath: resolved))?[.size] as? Int, size > 65_536 {
                    throw CLIError("\(tokenPath): the token file holds \(size) bytes; a token is one line (create one with tandem-server tokens create NAME)")
                }
                guard let data = FileManager.default.contents(atPath: tokenPath) else {
                    throw CLIError("\(tokenPath): the token file cannot be read")
                }
                let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                guard !token.isEmpty else {
                    throw CLIError("\(tokenPath): the token file is empty (create a token with tandem-server tokens create NAME)")
                }
                return token
            }
            return inline ?? ""
        }
    }

    func resolved() throws -> (server: String, dataset: String?, token: @Sendable () throws -> String) {
        let environment = ProcessInfo.processInfo.environment
        let file = try fileConfig()
        guard let server = server ?? environment["TANDEM_SERVER"] ?? file.server else {
            throw CLIError("no server: pass --server URL, set TANDEM_SERVER, or put \"server\" in the config file")
        }
        let token = try Self.token(file: tokenFile, configured: file.tokenFile)
        return (server, dataset ?? environment["TANDEM_DATASET"] ?? file.dataset, token)
    }
}

/// Prints JSON to standard output (sorted keys, one document).
func printJSON(_ value: some Encodable, pretty: Bool = true) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
    print(String(decoding: try encoder.encode(value), as: UTF8.self))
}

import ArgumentParser
import Foundation
import TandemCurl
import TandemLocking
import TandemSchema
import TandemSync
import TandemWire

/// `--server`, `--dataset` and `--token-file` of `tandem schema check` and `publish`: the
/// versions a live server has registered for a dataset, and registering a new one.
struct SchemaServerOptions: ParsableArguments {
    @Option(help: "A tandem-server URL, like https://sync.example.com: check against the versions it registered for --dataset.")
    var server: String?

    @Option(help: "The dataset on the server (with --server).")
    var dataset: String?

    @Option(help: "A file holding the token (with --server; or set TANDEM_TOKEN_FILE or TANDEM_TOKEN).")
    var tokenFile: String?

    /// Whether the options name a server.
    var isSet: Bool { server != nil }

    func validate() throws {
        if server == nil {
            if dataset != nil || tokenFile != nil { throw ValidationError("--dataset and --token-file go with --server") }
            return
        }
        guard let dataset, !dataset.isEmpty else { throw ValidationError("--server needs --dataset NAME") }
    }

    /// A failure to reach the server: exit 3, as `tandem sync` (retry later).
    struct Unreachable: Error {
        var message: String
    }

    /// Runs `body`; a server that did not answer (or is busy) is exit 3 with its message.
    static func exitingWhenUnreachable<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as Unreachable {
            FileHandle.standardError.write(Data("tandem: error: \(error.message)\n".utf8))
            throw CheckFailed(exitCode: 3)
        }
    }

    /// Every version the server registered for the dataset, oldest first, as baselines named
    /// `version N` (none for a dataset without a version yet).
    ///
    /// - Throws: ``CLIError`` when the server has no such dataset.
    func baselines() throws -> [CompatibilityCheck.Baseline] {
        let response = try call("GET", "/v1/datasets/\(try datasetName())/schema")
        if response.status == 404 {
            // A typo in CI must not pass as "nothing to check against".
            if let error = try? JSONDecoder().decode(WireErrorBody.self, from: response.body).error, error.code == "not_found", error.message.hasPrefix("no dataset") {
                throw CLIError("\(server!) has no dataset '\(dataset!)' for this token's user; check --dataset (tandem schema publish creates it)")
            }
            throw CLIError("\(server!) answered 404 to GET /v1/datasets/\(dataset!)/schema, not as a tandem-server does; check --server")
        }
        try expect(response, [200], "read the dataset's schema versions")
        let history: SchemaHistory
        do { history = try JSONDecoder().decode(SchemaHistory.self, from: response.body) } catch {
            throw CLIError("\(server!): the answer to GET /v1/datasets/\(dataset!)/schema is not a schema history: \(error)")
        }
        return try history.versions.map { version in
            do {
                return CompatibilityCheck.Baseline(name: "version \(version.version)", schema: try Schema(canonicalJSON: Data(version.schema.utf8)))
            } catch let error as SchemaError {
                throw CLIError("\(server!): version \(version.version) of '\(dataset!)' is not a schema this tandem reads: \(error.message)")
            }
        }
    }

    /// What the server answered to a registration.
    enum Publication {
        /// Registered as `version` (`created` false when it was a registered version already).
        case registered(version: Int, created: Bool)
        /// Refused: incompatible with a registered version.
        case refused(message: String, findings: [SchemaFinding])
    }

    /// Registers `schema` for the dataset (creating the dataset when it does not exist).
    func publish(_ schema: Schema) throws -> Publication {
        let name = try datasetName()
        try expect(try call("PUT", "/v1/datasets/\(name)"), [200, 201], "create the dataset")
        let body = try schema.canonicalJSON()
        let response = try call("PUT", "/v1/datasets/\(name)/schema", body: body)
        if response.status == 409, let error = try? JSONDecoder().decode(WireErrorBody.self, from: response.body).error, error.code == "schema_incompatible" {
            let findings = (error.findings ?? []).map { finding in
                SchemaFinding(
                    rule: finding.rule, path: finding.path, verdict: Verdict(rawValue: finding.verdict) ?? .breaking, message: finding.message, hint: finding.hint,
                    baselines: ["server"])
            }
            return .refused(message: error.message, findings: findings)
        }
        try expect(response, [200, 201], "register the schema")
        do {
            let registration = try JSONDecoder().decode(SchemaRegistration.self, from: response.body)
            return .registered(version: registration.version, created: registration.created)
        } catch {
            throw CLIError("\(server!): the answer to PUT /v1/datasets/\(name)/schema is not a registration: \(error)")
        }
    }

    private func datasetName() throws -> String {
        guard let dataset else { throw CLIError("--server needs --dataset NAME") }
        return dataset.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))) ?? dataset
    }

    /// Refuses an answer whose status is not one of `expected`, with the server's message.
    private func expect(_ response: TransportResponse, _ expected: Set<Int>, _ what: String) throws {
        guard !expected.contains(response.status) else { return }
        let detail =
            (try? JSONDecoder().decode(WireErrorBody.self, from: response.body).error).map { "\($0.code): \($0.message)" }
            ?? String(decoding: response.body.prefix(300), as: UTF8.self)
        if response.status == 401 { throw CLIError("\(server!) refused the token (401): \(detail); check --token-file") }
        let code = (try? JSONDecoder().decode(WireErrorBody.self, from: response.body).error.code) ?? ""
        if response.status == 429 || response.status >= 500 || code == "schema_contended" { throw Unreachable(message: "\(server!) could not \(what) (\(response.status)): \(detail); retry later") }
        throw CLIError("\(server!) could not \(what) (\(response.status)): \(detail)")
    }

    /// Sends one request and waits for the answer (the schema commands run on the main
    /// thread, whose stack parsing deep Swift sources needs; the request runs in a task).
    private func call(_ method: String, _ path: String, body: Data? = nil) throws -> TransportResponse {
        guard let server else { throw CLIError("no --server") }
        let token = try ServerOptions.token(file: tokenFile)()
        let transport: CurlTransport
        do { transport = try CurlTransport(baseURL: server, connectTimeout: 10, timeout: 60) } catch let error as SyncError { throw CLIError(error.message) }
        var headers = ["Authorization": "Bearer \(token)"]
        if body != nil { headers["Content-Type"] = "application/json" }
        let request = TransportRequest(method: method, path: path, headers: headers, body: body)
        let result = Locked<Result<TransportResponse, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let answer = await Result(catching: { try await transport.send(request) })
            result.withLock { $0 = answer }
            done.signal()
        }
        done.wait()
        do {
            return try result.withLock { $0 }!.get()
        } catch let error as SyncError {
            throw Unreachable(message: "\(server) did not answer: \(error.message)")
        }
    }
}

extension Result where Failure == any Error {
    /// The result of an async throwing body.
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}

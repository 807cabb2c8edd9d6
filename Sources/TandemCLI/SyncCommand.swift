import ArgumentParser
import Foundation
import Logging
import Tandem
import TandemCurl
import TandemSync

/// `tandem sync`: one push and pull with the server.
struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Push the store's local changes and pull everyone else's, once.",
        discussion: "Exit codes: 0 synced, 1 the server refused (a breaking schema, a bad token), 3 the server is unreachable or busy (retry later), 2 bad input.")
    @OptionGroup var store: StoreOptions
    @OptionGroup var server: ServerOptions
    @Flag(help: "Print the summary as JSON.") var json = false

    func run() async throws {
        let container = try store.open()
        let (url, dataset, token) = try server.resolved()
        let transport: CurlTransport
        do { transport = try CurlTransport(baseURL: url) } catch let error as SyncError { throw CLIError(error.message) }
        var configuration = SyncConfiguration(dataset: dataset, token: { try token() })
        let interactive = !json && isatty(STDERR_FILENO) == 1
        if interactive {
            configuration.progress = { progress in
                switch progress {
                case .pushed(let done, let total): FileHandle.standardError.write(Data("\rpushing \(done)/\(total)…   ".utf8))
                case .pulled(let done, let more): FileHandle.standardError.write(Data("\rpulled \(done)\(more ? "…" : "")        ".utf8))
                }
            }
        }
        let engine = SyncEngine(container: container, transport: transport, configuration: configuration)
        do {
            let summary = try await engine.sync()
            if interactive { FileHandle.standardError.write(Data("\r".utf8)) }
            if json { try printJSON(summary, pretty: false) } else { print("synced: \(summary)") }
        } catch let error as SyncError {
            if interactive { FileHandle.standardError.write(Data("\n".utf8)) }
            if error.code == .misconfigured { throw CLIError(error.message) }
            FileHandle.standardError.write(Data("tandem: sync failed: \(error.message)\n".utf8))
            throw CheckFailed(exitCode: error.isTransient ? 3 : 1)
        }
    }
}

/// `tandem status`.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Pending local changes, last successful sync, cursor, conflicts and quarantined changes; with --server, whether it answers.")
    @OptionGroup var store: StoreOptions
    @Option(help: "Also check that this server answers (GET /health).") var server: String?
    @Flag(help: "Print JSON.") var json = false

    struct Printed: Encodable {
        var store: String
        var dataset: String
        var pendingChanges: Int
        var lastSync: String?
        var cursor: String?
        var conflicts: Int
        var quarantined: Int
        var serverReachable: Bool?
    }

    func run() async throws {
        let container = try store.open()
        let status: SyncStatus
        do { status = try SyncStatus(of: container) } catch let error as SyncError { throw CLIError(error.message) }
        var reachable: Bool?
        if let server {
            do {
                let response = try await CurlTransport(baseURL: server, connectTimeout: 3, timeout: 5).send(TransportRequest(method: "GET", path: "/health"))
                reachable = response.status == 200
            } catch {
                reachable = false
            }
        }
        let lastSync = status.lastSync.map { Date(timeIntervalSince1970: Double($0) / 1000).ISO8601Format() }
        let printed = Printed(store: try store.path, dataset: container.dataset, pendingChanges: status.pendingChanges, lastSync: lastSync,
                              cursor: status.cursor, conflicts: status.conflicts, quarantined: status.quarantined, serverReachable: reachable)
        if json { try printJSON(printed); return }
        print("store:       \(printed.store) (dataset \(printed.dataset))")
        print("pending:     \(printed.pendingChanges) local change(s) not pushed")
        print("last sync:   \(lastSync ?? "never")")
        print("cursor:      \(status.cursor ?? "(none: nothing pulled yet)")")
        print("conflicts:   \(status.conflicts)")
        print("quarantined: \(status.quarantined)")
        if let reachable { print("server:      \(reachable ? "reachable" : "NOT reachable")") }
    }
}

/// `tandem conflicts`.
struct ConflictsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "conflicts",
        abstract: "The conflict log (every value that lost, newest first) and quarantined changes.")
    @OptionGroup var store: StoreOptions
    @Option(help: "At most this many entries.") var limit = 100
    @Flag(help: "Print JSON.") var json = false

    struct Printed: Encodable {
        var conflicts: [SyncConflict]
        var quarantined: [QuarantinedChange]
    }

    func run() throws {
        let container = try store.open()
        let printed: Printed
        do {
            printed = Printed(conflicts: try SyncStatus.conflicts(of: container, limit: limit),
                              quarantined: try SyncStatus.quarantined(of: container, limit: limit))
        } catch let error as SyncError { throw CLIError(error.message) }
        if json { try printJSON(printed); return }
        if printed.conflicts.isEmpty { print("no conflicts") }
        for conflict in printed.conflicts {
            print("\(conflict.record) \(conflict.attribute): \(conflict.winner.rawValue) won by \(conflict.rule); local \(conflict.localValue ?? "(deleted)") @\(conflict.localStamp ?? "-"), remote \(conflict.remoteValue ?? "(deleted)") @\(conflict.remoteStamp ?? "-")")
        }
        for change in printed.quarantined {
            print("quarantined (log position \(change.position.map(String.init) ?? "-")): \(change.reason)\n  \(change.change)")
        }
    }
}

import ArgumentParser
import Foundation
import Tandem
import TandemCurl
import TandemSync

/// `tandem quarantine list | retry | drop`: the changes waiting for their cause to go away.
struct QuarantineCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "quarantine",
        abstract: "Changes waiting in the quarantine: local ones the server refused (not on the server yet) and pulled ones not applied yet.",
        discussion: "Every sync sends the waiting local changes again and applies the waiting pulled ones again; retry does it now, drop gives one up (it stays in the conflict log, rule 'dropped').",
        subcommands: [List.self, Retry.self, Drop.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "The waiting changes, newest first, with their ids and reasons.")
        @OptionGroup var store: StoreOptions
        @Option(help: "At most this many.") var limit = 100
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            let container = try store.open()
            let waiting: [QuarantinedChange]
            do { waiting = try SyncStatus.quarantined(of: container, limit: limit) } catch let error as SyncError { throw CLIError(error.message) }
            if json { try printJSON(waiting); return }
            if waiting.isEmpty { print("nothing waiting"); return }
            for change in waiting {
                let when = Date(timeIntervalSince1970: Double(change.at) / 1000).ISO8601Format()
                let origin = change.isLocal ? "local, refused by the server" : "pulled, log position \(change.position ?? 0)"
                print("\(change.id)  \(when)  \(origin): \(change.reason)\n    \(ShortText.cut(change.change))")
            }
        }
    }

    struct Retry: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "retry",
            abstract: "Send the waiting local changes again and apply the waiting pulled ones again, now.",
            discussion: "Exit codes: 0 nothing waits any more, 1 some still wait (tandem quarantine list says why), 3 the server is unreachable.")
        @OptionGroup var store: StoreOptions
        @OptionGroup var server: ServerOptions

        func run() async throws {
            let container = try store.open()
            let (url, configuration) = try server.syncConfiguration(for: container)
            let transport: CurlTransport
            do { transport = try CurlTransport(baseURL: url) } catch let error as SyncError { throw CLIError(error.message) }
            let engine = SyncEngine(container: container, transport: transport, configuration: configuration)
            do {
                let left = try await engine.retryQuarantined()
                print(left == 0 ? "nothing waits any more" : "\(left) change(s) still waiting (tandem quarantine list)")
                if left > 0 { throw CheckFailed(exitCode: 1) }
            } catch let error as SyncError {
                if error.code == .misconfigured { throw CLIError(error.message) }
                FileHandle.standardError.write(Data("tandem: retry failed: \(error.message)\n".utf8))
                throw CheckFailed(exitCode: error.isTransient ? 3 : 1)
            }
        }
    }

    struct Drop: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "drop",
            abstract: "Give up waiting changes by id (from list): a local one is never sent, a pulled one never applied.",
            discussion:
                "Each dropped change is kept in the conflict log (rule 'dropped'). The store keeps what it holds: after dropping a local change its row still holds the values the server refused, and after dropping a pulled one it lacks what the change brought, so it differs from the server there until those values are edited again (here or elsewhere). An id that is not waiting is an error (exit 2); the others are dropped."
        )
        @OptionGroup var store: StoreOptions
        @Argument(help: "The ids to drop (tandem quarantine list).") var ids: [Int64]

        func validate() throws {
            guard !ids.isEmpty else { throw ValidationError("name at least one id (tandem quarantine list shows them)") }
        }

        func run() throws {
            let container = try store.open()
            let waiting: Set<Int64>
            do { waiting = Set(try SyncStatus.quarantined(of: container, limit: .max).map(\.id)) } catch let error as SyncError { throw CLIError(error.message) }
            let missing = ids.filter { !waiting.contains($0) }
            let dropped: Int
            do { dropped = try SyncEngine.dropQuarantined(ids.filter(waiting.contains), in: container) } catch let error as SyncError { throw CLIError(error.message) }
            print("dropped \(dropped)")
            if dropped > 0 {
                FileHandle.standardError.write(
                    Data("tandem: this store keeps what it holds: where a dropped change differs from the server, the store differs from the other replicas until those values are edited again\n".utf8)
                )
            }
            if !missing.isEmpty { throw CLIError("not waiting in the quarantine: \(missing.map(String.init).joined(separator: ", ")) (tandem quarantine list)") }
        }
    }
}

import ArgumentParser
import Foundation
import Logging
import Tandem
import TandemCurl
import TandemSync
import TandemWire

/// `tandem sync`: one push and pull with the server.
struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Push the store's local changes and pull everyone else's, once.",
        discussion:
            "Exit codes: 0 synced (every local change is on the server), 1 the server refused (a breaking schema, a bad token, or local changes it refused are waiting in the quarantine: tandem quarantine list), 3 the server is unreachable or busy (retry later), 2 bad input."
    )
    @OptionGroup var store: StoreOptions
    @OptionGroup var server: ServerOptions
    @Flag(help: "Print the summary as JSON.") var json = false

    func run() async throws { try await Self.perform(store: store, server: server, json: json, resync: false) }

    /// A sync, or a resync (`tandem resync`), with its progress, summary, messages and exit
    /// codes.
    static func perform(store: StoreOptions, server: ServerOptions, json: Bool, resync: Bool) async throws {
        let container = try store.open()
        var (url, configuration) = try server.syncConfiguration(for: container)
        let transport: CurlTransport
        do { transport = try CurlTransport(baseURL: url) } catch let error as SyncError { throw CLIError(error.message) }
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
            let summary = try await (resync ? engine.resync() : engine.sync())
            if interactive { FileHandle.standardError.write(Data("\r".utf8)) }
            if let offset = summary.clockOffset, abs(offset) >= 60_000 {
                FileHandle.standardError.write(
                    Data("tandem: warning: this machine's clock is \(ClockText.offset(offset)) the server's; edits are stamped with the server's time. Correct the clock (NTP)\n".utf8))
            }
            if json { try printJSON(summary, pretty: false) } else { print(summary.isComplete ? "synced: \(summary)" : "not synced: \(summary)") }
            if !summary.isComplete {
                let path = try store.path
                if summary.waitingLocal > 0 {
                    FileHandle.standardError.write(
                        Data(
                            "tandem: \(summary.waitingLocal) local change(s) the server refused are not on the server; they are sent again on every sync. See tandem quarantine list --store \(path)\n"
                                .utf8))
                }
                if summary.waitingPulled > 0 {
                    FileHandle.standardError.write(
                        Data(
                            "tandem: \(summary.waitingPulled) pulled change(s) could not be applied here; this store differs from the server until they are (tried again on every sync). See tandem quarantine list --store \(path)\n"
                                .utf8))
                }
                throw CheckFailed(exitCode: 1)
            }
        } catch let error as SyncError {
            if interactive { FileHandle.standardError.write(Data("\n".utf8)) }
            if error.code == .misconfigured { throw CLIError(error.message) }
            FileHandle.standardError.write(Data("tandem: sync failed: \(error.message)\n".utf8))
            throw CheckFailed(exitCode: error.isTransient ? 3 : 1)
        }
    }
}

/// `tandem resync`: starts again with the server without wiping the store.
struct ResyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resync",
        abstract: "Push every record of the store again and pull the dataset from the start (a stuck replica, a lost cursor, another server).",
        discussion: """
            Nothing is wiped: each record goes with its stored stamps, so a newer value on the server stays, and unpushed \
            local edits go as in any sync. Use it after the server's data was restored from an old backup, when the store's \
            cursor is lost or of another dataset (cursor_other_dataset: a store moved to another server), or after a long \
            absence. A resync cut short goes on at the next sync. Same options and exit codes as tandem sync.
            """)
    @OptionGroup var store: StoreOptions
    @OptionGroup var server: ServerOptions
    @Flag(help: "Print the summary as JSON.") var json = false

    func run() async throws { try await SyncCommand.perform(store: store, server: server, json: json, resync: true) }
}

/// `tandem status`.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Pending local changes, last successful sync, cursor, conflicts and quarantined changes; with a server set, whether it answers and how far behind its log the store is.",
        discussion: """
            With a server (--server, TANDEM_SERVER or the config file's), it is asked too: whether it answers as a \
            tandem-server (GET /health) and, when a token is set (--token-file, \
            TANDEM_TOKEN_FILE, TANDEM_TOKEN or the config file), how many log entries follow the store's cursor (behind). The \
            operator's dashboard shows the same pending and behind figures for this store's client id.
            """)
    @OptionGroup var store: StoreOptions
    @OptionGroup var server: ServerOptions
    @Flag(help: "Print JSON.") var json = false

    struct Printed: Encodable {
        var store: String
        var dataset: String
        /// The id the engine sends the server (`Tandem-Client`): the dashboard lists the store by it.
        var client: String
        var pendingChanges: Int
        var lastSync: String?
        var cursor: String?
        var conflicts: Int
        var quarantined: Int
        var waitingLocal: Int
        var keptForNewerSchema: Int
        var clockOffsetMilliseconds: Int64?
        var serverReachable: Bool?
        /// Log entries on the server after the store's cursor (with --server and a token).
        var behind: Int64?
        /// Why `behind` is missing, when it was asked for.
        var behindUnknown: String?
    }

    func run() async throws {
        let container = try store.open()
        let status: SyncStatus
        do { status = try SyncStatus(of: container) } catch let error as SyncError { throw CLIError(error.message) }
        var reachable: Bool?
        var behind: Int64?
        var behindUnknown: String?
        var notTandem = false
        // As a sync finds it: the flag, the environment, the config file (whose errors are
        // errors here too).
        let configured = try server.fileConfig()
        if let url = server.server ?? ProcessInfo.processInfo.environment["TANDEM_SERVER"].flatMap({ $0.isEmpty ? nil : $0 }) ?? configured.server {
            do {
                let response = try await CurlTransport(baseURL: url, connectTimeout: 3, timeout: 5).send(TransportRequest(method: "GET", path: "/health"))
                // Every answer of a tandem-server carries its clock: another web server's
                // 200 is not a sync server's.
                reachable = response.status == 200 && response.serverTime != nil
                // (A proxy's 502 while the server is down is no answer of another server.)
                notTandem = response.serverTime == nil && response.status < 500
            } catch {
                reachable = false
            }
            if reachable == true {
                (behind, behindUnknown) = await lag(container)
            } else {
                behindUnknown = notTandem ? "\(url) answers, but not as a tandem-server does: check --server" : "the server does not answer at \(url)"
            }
        }
        let lastSync = status.lastSync.map { Date(timeIntervalSince1970: Double($0) / 1000).ISO8601Format() }
        let printed = Printed(
            store: try store.path, dataset: container.dataset, client: SyncEngine.clientID(of: container), pendingChanges: status.pendingChanges,
            lastSync: lastSync, cursor: status.cursor, conflicts: status.conflicts, quarantined: status.quarantined,
            waitingLocal: status.waitingLocal, keptForNewerSchema: status.keptForNewerSchema, clockOffsetMilliseconds: status.clockOffset,
            serverReachable: reachable, behind: behind, behindUnknown: behindUnknown)
        if json { try printJSON(printed); return }
        print("store:       \(printed.store) (dataset \(printed.dataset))")
        print("client:      \(printed.client)")
        print(
            "pending:     \(printed.pendingChanges) local change(s) not on the server"
                + (status.waitingLocal > 0 ? " (\(status.waitingLocal) refused by it, waiting in the quarantine: tandem quarantine list)" : ""))
        print("last sync:   \(lastSync ?? "never")")
        print("cursor:      \(status.cursor ?? "(none: nothing pulled yet)")")
        print("conflicts:   \(status.conflicts)")
        print("quarantined: \(status.quarantined)")
        if status.keptForNewerSchema > 0 {
            print("kept:        \(status.keptForNewerSchema) value(s) of a newer schema, shown once this store migrates to it")
        }
        if let offset = status.clockOffset {
            print(
                "clock:       " + (abs(offset) < 1000 ? "agreed with the server's" : "was \(ClockText.offset(offset)) the server's (edits are stamped with the server's time)")
                    + " at the last sync")
        }
        if let reachable { print("server:      \(reachable ? "reachable" : "NOT reachable")") }
        if let behind { print("behind:      \(behind) log entr\(behind == 1 ? "y" : "ies") on the server after the cursor" + (behind > 0 ? " (tandem sync pulls them)" : "")) }
        if let behindUnknown { print("behind:      unknown: \(behindUnknown)") }
    }

    /// The server's count of log entries after the store's cursor, or why there is none.
    func lag(_ container: ModelContainer) async -> (Int64?, String?) {
        do {
            let (url, configuration) = try server.syncConfiguration(for: container)
            let engine = SyncEngine(container: container, transport: try CurlTransport(baseURL: url, connectTimeout: 3, timeout: 10), configuration: configuration)
            guard let lag = try await engine.lag() else { return (nil, "the store has not pulled yet (tandem sync)") }
            return (lag.behind, nil)
        } catch let error as CLIError {
            return (nil, error.message)
        } catch let error as SyncError {
            return (nil, error.message)
        } catch {
            return (nil, "\(error)")
        }
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
            printed = Printed(
                conflicts: try SyncStatus.conflicts(of: container, limit: limit),
                quarantined: try SyncStatus.quarantined(of: container, limit: limit))
        } catch let error as SyncError { throw CLIError(error.message) }
        if json { try printJSON(printed); return }
        if printed.conflicts.isEmpty { print("no conflicts") }
        for conflict in printed.conflicts {
            print(try ConflictText.describe(conflict, in: container))
        }
        for change in printed.quarantined {
            print("quarantined (log position \(change.position.map(String.init) ?? "-")): \(change.reason)\n  \(ShortText.cut(change.change))")
        }
    }
}

/// How a clock offset reads.
enum ClockText {
    /// `offset` (the server's clock minus this machine's, ms) as "3600 s behind" / "12 s ahead of".
    static func offset(_ offset: Int64) -> String {
        "\(abs(offset) / 1000) s \(offset > 0 ? "behind" : "ahead of")"
    }
}

/// A conflict log entry as a person reads it: when, which record, who won by which rule, and
/// both values; a merge names its survivor, a delete rule its parent.
enum ConflictText {
    static func describe(_ conflict: SyncConflict, in container: ModelContainer) throws -> String {
        let when = Date(timeIntervalSince1970: Double(conflict.at) / 1000).ISO8601Format()
        let record = conflict.record.split(separator: "/").suffix(2).joined(separator: "/")
        func value(_ text: String?, _ stamp: String?) -> String {
            ShortText.cut(text ?? "(deleted)") + (stamp.map { " @\($0)" } ?? "")
        }
        let local = value(conflict.localValue, conflict.localStamp), remote = value(conflict.remoteValue, conflict.remoteStamp)
        let what: String
        switch conflict.rule {
        case "uniqueMerge" where conflict.attribute == "*":
            let survivor = conflict.survivor.map { $0.split(separator: "/").suffix(2).joined(separator: "/") } ?? "?"
            what = "merged into \(survivor) (both held one unique value); its values: \(mergedValues(conflict.localValue ?? conflict.remoteValue))"
        case "uniqueMerge":
            what =
                "a record merged into this one (both held one unique value) brought a value written without seeing this one: kept \(remote); lost \(local)"
        case "parentDeleted":
            let entity = container.schema.entity(named: String(conflict.record.split(separator: "/").dropLast().last ?? ""))
            let parent = entity?.relationship(named: conflict.attribute)?.destination ?? "record"
            let target = (conflict.localValue ?? "").trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            let id = String(conflict.record.split(separator: "/").last ?? "")
            let exists =
                try entity.map { entity in
                    try container.read { db in try Bool.fetchOne(db, sql: "SELECT 1 FROM \(SQLName.quote(entity.name)) WHERE \"#id\" = ?", arguments: [id]) } ?? false
                } ?? false
            what =
                exists
                ? "reference cleared: its \(parent) \(target) was deleted elsewhere"
                : "record deleted (cascade from \(parent)/\(target), deleted elsewhere)"
        case "insertAfterDelete":
            what =
                conflict.winner == .local
                ? "a delete (or a merge) older than this store's insert of the record lost to it: the record stays"
                : "this store's delete lost to a later insert of the record: it is back"
        case "superseded":
            what = "a local change the server refused, replaced by a later edit: \(conflict.localValue ?? "-")"
        case "dropped":
            what = "dropped from the quarantine by hand: \(conflict.localValue ?? conflict.remoteValue ?? "-")"
        case "deleteWins":
            if conflict.winner == .local {
                what = "deleted here, and the delete wins: the pulled value lost: \(remote)"
            } else if conflict.winner == .server, let mine = conflict.localStamp.flatMap(HLCTimestamp.init),
                let delete = conflict.remoteStamp.flatMap(HLCTimestamp.init), mine > delete
            {
                // A value newer than the delete: the server keeps it with the deleted record.
                what =
                    "deleted elsewhere before this store's edit reached the server: the value is kept there, not applied, and comes back if the record is made again without a newer value for it: \(local)"
            } else {
                what = "deleted elsewhere, and the delete wins: this store's value lost: \(local)"
            }
        default:
            switch conflict.winner {
            case .local: what = "this store's value kept by \(conflict.rule): kept \(local); lost \(remote)"
            case .remote: what = "the pulled value won by \(conflict.rule): kept \(remote); lost \(local)"
            case .server: what = "the server's value won by \(conflict.rule): kept \(remote); lost \(local)"
            }
        }
        return "\(when)  \(record) \(conflict.attribute): \(what)"
    }

    /// A merged-away record's values as JSON: the entry keeps either the values its row held
    /// or a pulled change of it that was waiting in the quarantine (then its values are shown).
    static func mergedValues(_ text: String?) -> String {
        guard let text else { return "-" }
        guard let change = try? WireJSONReader.change(Data(text.utf8)) else { return text }
        var json = WireJSON()
        json.object(change.values) { $0.append($1) }
        return json.text
    }
}

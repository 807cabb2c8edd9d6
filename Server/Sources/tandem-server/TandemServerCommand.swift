import ArgumentParser
import Foundation
import Hummingbird
import Logging
import Metrics
import Prometheus
import ServiceLifecycle
import TandemServer
import TandemWire
import TandemServerPostgres

/// `tandem-server`: the Tandem sync server.
@main
struct TandemServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tandem-server",
        abstract: "The Tandem sync server: datasets, schema registry, push and pull over HTTP.",
        subcommands: [Serve.self, Users.self, Tokens.self, Datasets.self, Storage.self],
        defaultSubcommand: Serve.self)
}

/// Where the server keeps its database: SQLite under `--data-dir` (the default), or
/// PostgreSQL (`--database URL` or `TANDEM_DATABASE_URL`).
struct DataOptions: ParsableArguments {
    @Option(help: "The data directory (created if missing) of the SQLite storage, the default: everything in one file, tandem.sqlite. [default: tandem-data]")
    var dataDir: String?

    @Option(
        help: ArgumentHelp(
            "PostgreSQL instead of SQLite: postgres://USER:PASSWORD@HOST:PORT/DATABASE[?sslmode=disable|prefer|require|verify-full] (or TANDEM_DATABASE_URL).",
            discussion: "Any number of servers may share one database; the first of a new version migrates its tables."))
    var database: String?

    /// The PostgreSQL URL, from `--database` or `TANDEM_DATABASE_URL`.
    var databaseURL: String? {
        database ?? ProcessInfo.processInfo.environment["TANDEM_DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }

    func validate() throws {
        if dataDir != nil && databaseURL != nil {
            throw ValidationError("pass either --data-dir (SQLite) or --database / TANDEM_DATABASE_URL (PostgreSQL), not both")
        }
    }

    /// The server's storage; `creating` makes a SQLite database when missing (`serve`,
    /// `users add`), else a missing one is an error (a mistyped `--data-dir` must not start an
    /// empty database). A PostgreSQL database gets its tables whatever the command; its
    /// connections are named `applicationName` (serving nodes: `tandem-server`).
    func storage(
        creating: Bool = false, applicationName: String = "tandem-server admin", logger: Logger = Logger(label: "tandem-server")
    ) async throws -> any ServerStorage {
        if let databaseURL {
            do {
                let storage = try await PostgresServerStorage(
                    url: PostgresURL(databaseURL), applicationName: applicationName,
                    listens: applicationName == PostgresServerStorage.nodeApplicationName, logger: logger)
                if let reason = storage.newEpochReason { Self.log(reason, logger) }
                return storage
            } catch {
                throw ValidationError("\(error)")
            }
        }
        return try sqliteStorage(creating: creating, logger: logger)
    }

    /// The SQLite data directory (`--data-dir`, default `tandem-data`).
    var directory: String { dataDir ?? "tandem-data" }

    /// The SQLite storage under ``directory``; see ``storage(creating:logger:)``.
    func sqliteStorage(creating: Bool = false, logger: Logger = Logger(label: "tandem-server")) throws -> SQLiteServerStorage {
        let dataDir = directory
        let file = (dataDir as NSString).appendingPathComponent("tandem.sqlite")
        guard creating || FileManager.default.fileExists(atPath: file) else {
            throw ValidationError("no tandem-server database at \(file): pass the --data-dir the server uses (tandem-server users add NAME makes one)")
        }
        do {
            try FileManager.default.createDirectory(atPath: dataDir, withIntermediateDirectories: true)
        } catch {
            throw ValidationError("cannot create the data directory \(dataDir): \(error.localizedDescription)")
        }
        do {
            let storage = try SQLiteServerStorage(path: file)
            if let reason = storage.newEpochReason { Self.log(reason, logger) }
            if let target = storage.copiedTo {
                logger.warning(
                    "this data was copied (tandem-server storage copy) to \(target); serve from there. Clients that sync here and there resync each time they change sides"
                )
            }
            return storage
        } catch {
            throw ValidationError("\(error)")
        }
    }

    /// Locks the SQLite data directory (``DataDirLock``); `nil` on PostgreSQL.
    func lock(exclusive: Bool) throws -> DataDirLock? {
        guard databaseURL == nil else { return nil }
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        do { return try DataDirLock(dataDir: directory, exclusive: exclusive) } catch { throw ValidationError("\(error)") }
    }

    private static func log(_ reason: String, _ logger: Logger) {
        if reason == "new data" { return }
        logger.notice("a new epoch starts: every client's next pull resyncs it from the start", metadata: ["reason": "\(reason)"])
    }
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Serve protocol v1 until SIGTERM or SIGINT (in-flight requests finish).")

    @OptionGroup var data: DataOptions
    @Option(help: "The address to listen on.") var host = "127.0.0.1"
    @Option(help: "The port to listen on.") var port = 8080
    @Option(help: "The largest request body, in bytes.") var maxBodyBytes = ServerConfiguration().maxBodyBytes
    @Option(help: "The most changes in one push.") var maxChangesPerPush = ServerConfiguration().maxChangesPerPush
    @Option(help: "The largest pull page.") var maxPageSize = ServerConfiguration().maxPageSize
    @Option(help: "Bytes after which a pull page ends (a larger entry still goes out alone).")
    var maxPageBytes = ServerConfiguration().maxPageBytes
    @Option(help: "Seconds a connection waiting for a request may go without sending anything (idle keep-alive, a stalled request).")
    var idleTimeout = Int(ServerConfiguration().idleTimeout.components.seconds)
    @Option(help: "Seconds a connection may take to send a whole request head, from its opening or its last answer, however slowly.")
    var headerTimeout = Int(ServerConfiguration().headerTimeout.components.seconds)
    @Option(help: "Seconds a request's body may take to arrive after its head.")
    var bodyTimeout = Int(ServerConfiguration().bodyTimeout.components.seconds)
    @Option(help: "Seconds to wait on SIGTERM/SIGINT for requests in flight before cancelling them and exiting.")
    var shutdownTimeout = Int(ServerConfiguration().shutdownTimeout.components.seconds)
    @Option(help: "Connections open at once (kept below the descriptor limit, which the server raises to the system's hard limit).")
    var maxConnections = ServerConfiguration().maxConnections
    @Option(help: "The longest wait, in seconds, a pull may ask for (live sync: it answers when a change arrives or the wait ends).")
    var maxPullWait = Int(ServerConfiguration().maxPullWait.components.seconds)
    @Option(help: "Pulls one user may have waiting at once; one more gets 429 too_many_waiting.")
    var maxWaitingPullsPerUser = ServerConfiguration().maxWaitingPullsPerUser
    @Option(help: "Datasets a user may create.") var maxDatasetsPerUser = ServerConfiguration().maxDatasetsPerUser
    @Option(help: "Schema versions a dataset may register.") var maxSchemaVersions = ServerConfiguration().maxSchemaVersions
    @Option(help: "Bytes a user's datasets may hold (logs, lost values, schemas), e.g. 500M or 20G (users quota NAME --bytes sets one user's).")
    var maxBytesPerUser = ByteCount(ServerConfiguration().maxBytesPerUser)
    @Option(help: "The largest schema a dataset registers, in bytes of JSON.") var maxSchemaBytes = ServerConfiguration().maxSchemaBytes
    @Option(help: "The most entities in a schema.") var maxSchemaEntities = ServerConfiguration().maxSchemaEntities
    @Option(help: "The most attributes and relationships in a schema, over all its entities.")
    var maxSchemaMembers = ServerConfiguration().maxSchemaMembers
    @Option(help: "Requests per second per token (0: no limit).") var requestsPerSecond = ServerConfiguration().requestsPerSecond
    @Option(help: "Requests a token may burst above the rate.") var burst = ServerConfiguration().burst
    @Option(help: "How far ahead of the server's clock a stamp may be, in milliseconds.")
    var maxClockSkew = ServerConfiguration().maxClockSkewMilliseconds
    @Option(help: "Days a push's answer is kept for Idempotency-Key replays.") var idempotencyRetentionDays = 7
    @Option(
        help: """
            How long each dataset's log keeps its entries (45s, 90m, 12h, 30d, 2w), or 'forever'. Older entries are folded into the \
            records (clients whose cursor is older bootstrap again from a snapshot) and old tombstones pruned.
            """)
    var logRetention = "30d"
    @Option(help: "Keep at least the newest N entries of each dataset's log (with --log-retention, an entry is kept while either keeps it).")
    var logRetentionEntries: Int64?
    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.") var logLevel = "info"
    @Option(help: "Accept the app's own sign-in: JWTs verified against this JWKS, a file or an https:// URL (read at start, cached, read again for a new key id).")
    var jwks: String?
    @Option(help: "The issuer (iss) a JWT must name; required with --jwks.") var jwtIssuer: String?
    @Option(help: "The audience (aud) a JWT must include; required with --jwks.") var jwtAudience: String?
    @Option(help: "The claim whose value is the user's name (made on first use); with --jwks.") var jwtUserClaim = "sub"

    func validate() throws {
        // A limit below 1 would refuse every push, or answer pulls with empty pages that
        // clients take for the end of the log.
        for (name, value) in [
            ("--max-body-bytes", Int64(maxBodyBytes)), ("--max-changes-per-push", Int64(maxChangesPerPush)),
            ("--max-page-size", Int64(maxPageSize)), ("--max-clock-skew", maxClockSkew),
            ("--max-page-bytes", Int64(maxPageBytes)), ("--max-schema-bytes", Int64(maxSchemaBytes)),
            ("--max-schema-entities", Int64(maxSchemaEntities)), ("--max-schema-members", Int64(maxSchemaMembers)),
            ("--max-datasets-per-user", Int64(maxDatasetsPerUser)), ("--max-schema-versions", Int64(maxSchemaVersions)),
            ("--max-bytes-per-user", maxBytesPerUser.value), ("--idle-timeout", Int64(idleTimeout)), ("--header-timeout", Int64(headerTimeout)),
            ("--body-timeout", Int64(bodyTimeout)), ("--shutdown-timeout", Int64(shutdownTimeout)), ("--max-connections", Int64(maxConnections)),
            ("--max-pull-wait", Int64(maxPullWait)), ("--max-waiting-pulls-per-user", Int64(maxWaitingPullsPerUser)),
        ] where value < 1 {
            throw ValidationError("\(name) must be at least 1 (got \(value))")
        }
        guard idempotencyRetentionDays >= 1 else { throw ValidationError("--idempotency-retention-days must be at least 1") }
        guard requestsPerSecond >= 0, burst >= 0 else { throw ValidationError("--requests-per-second and --burst cannot be negative") }
        if jwks == nil {
            guard jwtIssuer == nil, jwtAudience == nil else { throw ValidationError("--jwt-issuer and --jwt-audience go with --jwks FILE|URL") }
        } else {
            guard let jwtIssuer, !jwtIssuer.isEmpty, let jwtAudience, !jwtAudience.isEmpty else {
                throw ValidationError("--jwks needs --jwt-issuer ISS and --jwt-audience AUD: a JWT of another issuer or app is never accepted")
            }
            _ = try jwksSource()
            guard !jwtUserClaim.isEmpty else { throw ValidationError("--jwt-user-claim names a claim of the JWT (sub by default); it cannot be empty") }
        }
    }

    private func jwksSource() throws -> (any JWKSSource)? {
        guard let jwks else { return nil }
        do {
            return try JWKSSources.live(jwks)
        } catch let error as StorageError {
            throw ValidationError(error.description)
        }
    }

    func run() async throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        var configuration = ServerConfiguration()
        configuration.maxBodyBytes = maxBodyBytes
        configuration.maxChangesPerPush = maxChangesPerPush
        configuration.maxPageSize = maxPageSize
        configuration.maxPageBytes = maxPageBytes
        configuration.maxSchemaBytes = maxSchemaBytes
        configuration.maxSchemaEntities = maxSchemaEntities
        configuration.maxSchemaMembers = maxSchemaMembers
        configuration.maxDatasetsPerUser = maxDatasetsPerUser
        configuration.maxSchemaVersions = maxSchemaVersions
        configuration.maxBytesPerUser = maxBytesPerUser.value
        configuration.idleTimeout = .seconds(idleTimeout)
        configuration.headerTimeout = .seconds(headerTimeout)
        configuration.bodyTimeout = .seconds(bodyTimeout)
        configuration.maxPullWait = .seconds(maxPullWait)
        configuration.maxWaitingPullsPerUser = maxWaitingPullsPerUser
        // Every connection holds a descriptor: past the limit, accept fails for everyone
        // (answers included, as the database's files need descriptors too).
        let descriptors = DescriptorLimit.raiseToHardLimit()
        configuration.maxConnections = min(maxConnections, max(descriptors - 128, 16))
        configuration.requestsPerSecond = requestsPerSecond
        configuration.burst = burst
        configuration.maxClockSkewMilliseconds = maxClockSkew
        configuration.idempotencyRetentionMilliseconds = Int64(idempotencyRetentionDays) * 24 * 3600 * 1000
        configuration.compaction = try Self.compactionPolicy(retention: logRetention, entries: logRetentionEntries)
        let logger = Logger(label: "tandem-server")
        if configuration.maxConnections < maxConnections {
            logger.warning(
                "--max-connections \(maxConnections) lowered to \(configuration.maxConnections): the descriptor limit is \(descriptors) (raise LimitNOFILE / ulimit -n)")
        }
        // One registry for the server's own metrics and those of the libraries it runs on.
        let metrics = ServerMetrics()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: metrics.registry))
        let lock = try data.lock(exclusive: false)
        defer { lock?.release() }
        let storage = try await data.storage(creating: true, applicationName: PostgresServerStorage.nodeApplicationName, logger: logger)
        var verifier: JWTVerifier?
        if let source = try jwksSource(), let jwtIssuer, let jwtAudience {
            let jwt = JWTVerifier(
                settings: JWTSettings(issuer: jwtIssuer, audience: jwtAudience, userClaim: jwtUserClaim), source: source,
                logger: Logger(label: "tandem-server.jwt"))
            do {
                let keys = try await jwt.load()
                logger.info("accepting the app's sign-in", metadata: ["jwks": "\(source.location)", "keys": "\(keys)", "issuer": "\(jwtIssuer)"])
            } catch {
                throw ValidationError("--jwks \(source.location): \(error)")
            }
            verifier = jwt
        }
        let app = buildApplication(
            ServerDependencies(storage: storage, configuration: configuration, metrics: metrics, jwt: verifier),
            host: host, port: port, logger: logger)
        // SIGTERM or SIGINT: stop accepting, let requests in flight finish, and past the
        // shutdown timeout cancel them (a cancelled push rolls back; SQLite's locks go with
        // the process), so a replacement server never finds the database locked.
        // Waiting pulls end first (services shut down in reverse order).
        var group = ServiceGroupConfiguration(
            services: [app, WaitingPullsService(signals: storage.logSignals)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        group.maximumGracefulShutdownDuration = .seconds(shutdownTimeout)
        group.maximumCancellationDuration = .seconds(5)
        try await ServiceGroup(configuration: group).run()
        // The data's last high-water mark, so a restore made while the server is stopped is seen.
        await (storage as? SQLiteServerStorage)?.refreshMark()
    }

    /// The compaction policy of `--log-retention` and `--log-retention-entries`.
    static func compactionPolicy(retention: String, entries: Int64?) throws -> CompactionPolicy {
        var policy = CompactionPolicy(keepEntries: entries)
        if retention != "forever" {
            guard let lifetime = Lifetime(argument: retention) else {
                throw ValidationError("--log-retention takes a number and s, m, h, d or w (30d, 12h), or 'forever'; got '\(retention)'")
            }
            policy.keepMilliseconds = lifetime.milliseconds
        } else if entries == nil {
            policy.keepMilliseconds = nil
        }
        if let entries, entries < 1 { throw ValidationError("--log-retention-entries must be 1 or more; got \(entries)") }
        return policy
    }
}

struct Users: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Manage users.", subcommands: [Add.self, List.self, Remove.self, Quota.self, Role.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a user.")
        @OptionGroup var data: DataOptions
        @Argument(help: "The user name.") var name: String
        @Option(help: "Bind the user to this subject (sub) of the app's sign-in: a JWT of it is this user (serve --jwks).")
        var jwtSubject: String?
        @Flag(help: "An operator: their token opens the dashboard (/admin), which shows every dataset.")
        var `operator` = false

        func run() async throws {
            // A user name is part of a shared dataset's name (OWNER/NAME, OWNER~NAME in URLs).
            guard DatasetReference.isName(name) else {
                throw ValidationError("user names are 1–128 letters, digits, '-', '_' or '.', and not '.' or '..'")
            }
            do {
                let storage = try await data.storage(creating: true)
                let user = try await storage.addUser(
                    name: name, now: Int64(Date().timeIntervalSince1970 * 1000), subject: jwtSubject.flatMap { $0.isEmpty ? nil : $0 })
                if `operator` { try await storage.setOperator(user: user.id, true) }
                print("user \(user.name) added\(`operator` ? " (operator)" : "")")
            } catch let error as StorageError {
                throw ValidationError(error.description)
            }
        }
    }
}

struct Tokens: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Manage API tokens.", subcommands: [Create.self, List.self, Revoke.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a token for a user; it is printed once and stored hashed.",
            discussion: """
                A token reaches every dataset its user reaches, unless limited:
                  tandem-server tokens create bob --dataset ann/todos --read-only --expires 30d
                Durations: a number and s, m, h, d or w (45s, 90m, 12h, 30d, 2w). The user's role in each dataset still applies.
                """)
        @OptionGroup var data: DataOptions
        @Argument(help: "The user name.") var name: String
        @Option(name: .customLong("dataset"), help: "Limit the token to this dataset, OWNER/NAME (repeatable).") var datasets: [String] = []
        @Flag(help: "Pulls only: pushes, schema registrations and member changes are refused.") var readOnly = false
        @Option(help: "Expire after this long: a number and s, m, h, d or w (90m, 12h, 30d).") var expires: Lifetime?

        func run() async throws {
            let storage = try await data.storage()
            guard let user = try await storage.user(named: name) else {
                throw ValidationError("no user '\(name)': add it with tandem-server users add \(name)")
            }
            var ids: [Int64] = []
            for text in datasets {
                let (reference, owner, id) = try await Datasets.dataset(text, in: storage)
                if owner.id != user.id, try await storage.role(dataset: id, user: user.id) == nil {
                    throw ValidationError("'\(name)' is not a member of \(reference): share it first (tandem-server datasets share \(reference) --with \(name) --role reader)")
                }
                if !ids.contains(id) { ids.append(id) }
            }
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            var expiresAt: Int64?
            if let expires {
                let (sum, overflow) = now.addingReportingOverflow(expires.milliseconds)
                guard !overflow else { throw ValidationError("--expires is too far off; a token that never expires is made without it") }
                expiresAt = sum
            }
            let scope = TokenScope(datasets: datasets.isEmpty ? nil : ids, readOnly: readOnly, expiresAt: expiresAt)
            print(try await TokenIssuer.issue(for: user, in: storage, scope: scope, now: now))
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a token (by the token, or its id: the 12 hex digits after tdm_).")
        @OptionGroup var data: DataOptions
        @Argument(help: "The token or its id.") var token: String

        func run() async throws {
            let id = token.hasPrefix("tdm_") ? String(token.dropFirst(4).prefix(12)) : token
            guard try await data.storage().revokeToken(id: id) else {
                throw ValidationError("no live token with id \(id)")
            }
            print("token \(id) revoked")
        }
    }
}

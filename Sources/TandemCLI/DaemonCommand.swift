import ArgumentParser
import Dispatch
import Foundation
import Logging
import Synchronization
import Tandem
import TandemCurl
import TandemSync

/// `tandem daemon`: syncs a store until SIGTERM or SIGINT.
struct DaemonCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "daemon",
        abstract: "Keep a store in sync, live: other replicas' changes arrive as they are pushed, local ones are pushed within moments; backs off when the server is away.",
        discussion:
            "Live (the default): a pull waits at the server, which answers as soon as another replica pushes; local commits are pushed within about 25 ms (100 ms after a quiet spell); a full sync also runs every --interval as a safety net. With --no-live: a sync on start, every --interval, and soon after local changes. SIGTERM or SIGINT lets a sync in progress finish, then exits 0. After a crash it resumes where it stopped (the cursor and the pushed ranges live in the store). Logs go to standard error (TANDEM_LOG_LEVEL, default info)."
    )
    @OptionGroup var store: StoreOptions
    @OptionGroup var server: ServerOptions
    @Option(help: "Seconds between full syncs (live: the safety net; --no-live: the polling period).") var interval: Double = 30
    @Flag(inversion: .prefixedNo, help: "Wait at the server for other replicas' changes (a server without live pulls is polled every --interval).")
    var live = true
    @Option(help: "Seconds one live pull waits at the server before asking again, 1 to 100 (cut to the server's maximum).") var wait: Double = 25
    @Option(help: "Longest backoff after failures, in seconds.") var maxBackoff: Double = 300

    func validate() throws {
        guard interval.isFinite, interval >= 0.05 else { throw ValidationError("--interval must be a number of seconds, at least 0.05") }
        guard maxBackoff.isFinite, maxBackoff >= 0.05 else { throw ValidationError("--max-backoff must be a number of seconds, at least 0.05") }
        // Below the transport's 120 s timeout, so a wait never looks like a dead server.
        guard wait.isFinite, wait >= 1, wait <= 100 else { throw ValidationError("--wait must be a number of seconds from 1 to 100") }
    }

    func run() async throws {
        let container = try store.open()
        let (url, configuration) = try server.syncConfiguration(for: container)
        let transport: CurlTransport
        do { transport = try CurlTransport(baseURL: url) } catch let error as SyncError { throw CLIError(error.message) }
        var logger = Logger(label: "tandem.daemon")
        logger.logLevel = ProcessInfo.processInfo.environment["TANDEM_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info
        let engine = SyncEngine(
            container: container, transport: transport,
            configuration: configuration, logger: logger)
        let stopping = Stop()
        var sources: [any DispatchSourceSignal] = []
        for signal in [SIGTERM, SIGINT] {
            Foundation.signal(signal, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signal)
            source.setEventHandler { stopping.flag.store(true, ordering: .relaxed) }
            source.resume()
            sources.append(source)
        }
        let path = try store.path
        logger.info("daemon started", metadata: ["store": "\(path)", "server": "\(url)", "interval": "\(interval)s", "live": "\(live)"])
        let log = logger
        let report: @Sendable (Result<SyncSummary, SyncError>) -> Void = { result in
            if case .success(let summary) = result, summary.pushed + summary.pulled + summary.conflicts + summary.quarantined + summary.waitingLocal > 0 {
                log.info(
                    summary.isComplete ? "synced" : "synced, but changes wait in the quarantine: local ones the server refused, or pulled ones not applied here (tandem quarantine list)",
                    metadata: ["summary": "\(summary)"])
            }
        }
        let every = Duration.milliseconds(Int64(interval * 1000))
        let backoff = Backoff(maximum: .milliseconds(Int64(maxBackoff * 1000)))
        if live {
            await engine.runLive(
                every: every, wait: .milliseconds(Int64(wait * 1000)), backoff: backoff, shouldStop: { stopping.flag.load(ordering: .relaxed) }, onSync: report)
        } else {
            await engine.run(every: every, backoff: backoff, shouldStop: { stopping.flag.load(ordering: .relaxed) }, onSync: report)
        }
        sources.forEach { $0.cancel() }
        logger.info("daemon stopped")
    }

    final class Stop: Sendable {
        let flag = Atomic(false)
    }
}

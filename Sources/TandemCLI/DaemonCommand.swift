import ArgumentParser
import Dispatch
import Foundation
import Logging
import Synchronization
import Tandem
import TandemCurl
import TandemLocking
import TandemSync

/// `tandem daemon`: syncs a store until SIGTERM or SIGINT.
struct DaemonCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "daemon",
        abstract: "Keep a store in sync, live: other replicas' changes arrive as they are pushed, local ones are pushed within moments; backs off when the server is away.",
        discussion:
            "Live (the default): a pull waits at the server, which answers as soon as another replica pushes; local commits are pushed within about 25 ms (100 ms after a quiet spell); a full sync also runs every --interval as a safety net. With --no-live: a sync on start, every --interval, and soon after local changes. SIGTERM or SIGINT lets a sync in progress finish (for up to 20 s; a second signal stops at once: what the cut sync had not finished goes with the next), then exits 0. A first sync that finds the setup wrong (the server's URL, the token file) exits 2; later failures are retried. After a crash it resumes where it stopped (the cursor and the pushed ranges live in the store). Logs go to standard error (TANDEM_LOG_LEVEL, default info)."
    )
    @OptionGroup var store: StoreOptions
    @OptionGroup var server: ServerOptions
    @Option(help: "Seconds between full syncs (live: the safety net; --no-live: the polling period).") var interval: Double = 30
    @Flag(inversion: .prefixedNo, help: "Wait at the server for other replicas' changes (a server without live pulls is polled every --interval).")
    var live = true
    @Option(help: "Seconds one live pull waits at the server before asking again, 1 to 100 (cut to the server's maximum).") var wait: Double = 25
    @Option(help: "Longest backoff after failures, in seconds.") var maxBackoff: Double = 300

    func validate() throws {
        // At most a year: longer is a typo, and past 9.2e15 s the milliseconds overflow.
        guard interval.isFinite, (0.05...31_536_000).contains(interval) else {
            throw ValidationError("--interval must be a number of seconds from 0.05 to 31536000 (a year)")
        }
        guard maxBackoff.isFinite, (0.05...31_536_000).contains(maxBackoff) else {
            throw ValidationError("--max-backoff must be a number of seconds from 0.05 to 31536000 (a year)")
        }
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
        let loop = Locked<Task<Void, Never>?>(nil)
        let log = logger
        var sources: [any DispatchSourceSignal] = []
        for signal in [SIGTERM, SIGINT] {
            Foundation.signal(signal, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signal)
            source.setEventHandler {
                // The first signal lets the sync in progress finish (up to the grace period:
                // a server that hangs would hold it for the transport's whole timeout); a
                // second one stops at once. What a cut sync had not finished is sent again,
                // under the same keys, by the next one.
                if stopping.flag.exchange(true, ordering: .relaxed) {
                    log.notice("stopping now (second signal)")
                    loop.withLock { $0?.cancel() }
                    return
                }
                log.notice("stopping after the sync in progress, at most \(Int(Self.stopGrace)) s (a second SIGINT or SIGTERM stops at once)")
                DispatchQueue.global().asyncAfter(deadline: .now() + Self.stopGrace) { loop.withLock { $0?.cancel() } }
            }
            source.resume()
            sources.append(source)
        }
        let path = try store.path
        logger.info("daemon started", metadata: ["store": "\(path)", "server": "\(url)", "interval": "\(interval)s", "live": "\(live)"])
        // A first sync that finds the setup wrong (a wrong URL, an unreadable or oversized
        // token file) stops the daemon (exit 2, as `tandem sync`): no retry mends it, and a
        // service manager shows the failure. Later, the same is retried (a token file being
        // replaced, say).
        let misconfigured = Locked<SyncError?>(nil)
        let first = Atomic(true)
        let report: @Sendable (Result<SyncSummary, SyncError>) -> Void = { result in
            if first.exchange(false, ordering: .relaxed), case .failure(let error) = result, error.code == .misconfigured {
                misconfigured.withLock { $0 = error }
                loop.withLock { $0?.cancel() }
            }
            if case .success(let summary) = result, summary.pushed + summary.pulled + summary.conflicts + summary.quarantined + summary.waitingLocal > 0 {
                log.info(
                    summary.isComplete ? "synced" : "synced, but changes wait in the quarantine: local ones the server refused, or pulled ones not applied here (tandem quarantine list)",
                    metadata: ["summary": "\(summary)"])
            }
        }
        let every = Duration.milliseconds(Int64(interval * 1000))
        let backoff = Backoff(maximum: .milliseconds(Int64(maxBackoff * 1000)))
        let (live, wait) = (self.live, self.wait)
        let task = Task {
            if live {
                await engine.runLive(
                    every: every, wait: .milliseconds(Int64(wait * 1000)), backoff: backoff, shouldStop: { stopping.flag.load(ordering: .relaxed) },
                    onSync: report)
            } else {
                await engine.run(every: every, backoff: backoff, shouldStop: { stopping.flag.load(ordering: .relaxed) }, onSync: report)
            }
        }
        loop.withLock { $0 = task }
        // A signal, or a first sync that found the setup wrong, before the task was kept.
        if stopping.flag.load(ordering: .relaxed) || misconfigured.withLock({ $0 != nil }) { task.cancel() }
        await task.value
        sources.forEach { $0.cancel() }
        if let error = misconfigured.withLock({ $0 }) { throw CLIError(error.message) }
        logger.info("daemon stopped")
    }

    final class Stop: Sendable {
        let flag = Atomic(false)
    }

    /// How long (s) a sync in progress may go on after SIGTERM or SIGINT: under the shipped
    /// unit's `TimeoutStopSec=60`.
    static let stopGrace: Double = 20
}

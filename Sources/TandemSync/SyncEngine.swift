public import Foundation
public import Logging
import TandemLocking
public import Tandem
import GRDB
import TandemSchema
import TandemWire

/// Syncs one store with a dataset on `tandem-server`: pushes the store's journaled local
/// changes and pulls everyone else's, working from the store file's own schema and journal
/// (not the app's Swift classes), so an app, the `tandem` CLI and the daemon share it.
///
/// ```swift
/// let engine = SyncEngine(container: container, transport: try URLSessionTransport(baseURL: serverURL),
///                         configuration: SyncConfiguration(token: { token }))
/// let summary = try await engine.sync()   // pushed 3, pulled 12, conflicts 1, quarantined 0
/// ```
///
/// A sync registers the store's schema with the dataset when the dataset lacks it and it is
/// compatible, and refuses to sync otherwise (``SyncError/Code/schemaIncompatible``, naming
/// the breaking rules). Pushes are acknowledged in the journal only after the server's
/// answer; a retried push has the same idempotency key. Each pulled page is applied in one
/// transaction together with the new cursor.
public actor SyncEngine {
    /// The engine's own queue: its SQLite and JSON work blocks, so it stays off Swift's
    /// cooperative pool (see ``SyncExecutor``).
    private let executor = SyncExecutor(label: "tandem.sync.engine")
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    public let container: ModelContainer
    let transport: any Transport
    let configuration: SyncConfiguration
    let logger: Logger
    let clock: @Sendable () -> Int64
    private var prepared = false
    /// The per-column comparison pulls use (see ``ChangeApplier/remoteWins``).
    var remoteWins: @Sendable (HLCTimestamp, HLCTimestamp) -> Bool = { $0 > $1 }

    /// Plants a wrong comparison (tests only: the simulation must catch it).
    func plant(remoteWins: @escaping @Sendable (HLCTimestamp, HLCTimestamp) -> Bool) {
        self.remoteWins = remoteWins
    }
    /// Whether pulled deletes apply delete rules to local records (tests plant `false`).
    var appliesDeleteRules = true

    /// Plants a pull that ignores delete rules (tests only: the simulation must catch it).
    func plantIgnoredDeleteRules() {
        appliesDeleteRules = false
    }
    /// Whether a bootstrap over the store's records deletes those the snapshot lacks (tests
    /// plant `false` to show that the simulation catches it).
    var sweepsOnBootstrap = true
    func plantNoSweep() {
        sweepsOnBootstrap = false
    }
    /// Whether an echo is skipped only when no pulled change came after the pushed edits
    /// (tests plant `false` to show that the simulation catches it).
    var echoSkipChecksPulledChanges = true
    /// The batch size later ranges are cut to once the server refused a batch as too large
    /// (`batch_too_large`, a server with a lower cap than ``SyncConfiguration/pushBatchSize``):
    /// the cap its message names, or half the refused batch. For this engine's life: a
    /// `tandem sync` process pays one refused push against such a server, a daemon one.
    var batchLimit: Int?

    /// Whether a `clock_skew` refusal is repaired (tests plant `false`: the refused edits then
    /// wait in the quarantine for good, and the simulation must notice the lost values).
    var repairsClock = true

    /// Plants a sync that never repairs a refused clock (tests only).
    func plantNoClockRepair() {
        repairsClock = false
    }

    /// Plants an echo skip that ignores pulled changes (tests only: the simulation must catch it).
    func plantEchoSkipIgnoringPulledChanges() {
        echoSkipChecksPulledChanges = false
    }

    /// Whether pulled values this store's schema cannot show are kept (`false` only when a
    /// test plants their loss: the simulation must catch it).
    var keepsUnknownValues = true

    /// Plants an applier that drops what its schema cannot show instead of keeping it
    /// (tests only).
    func plantDroppingUnknownValues() {
        keepsUnknownValues = false
    }
    private var schemaVersion: Int?
    /// The enum cases the applier shows beyond the store's schema's (entity → column →
    /// cases): when the registered versions this store's schema is list what the app
    /// cannot (the cases of an enum that is not CaseIterable, published from the sources),
    /// those all of them list. Set by the handshake.
    var publishedEnumCases: [String: [String: EnumCases]] = [:]
    /// Whether this engine applied the kept values its schema can show (``applyKept()``).
    var keptTried = false
    /// The store's column names on the wire (renamed attributes under their first name).
    lazy var naming = WireNaming(schema: container.schema, formerColumns: (try? container.formerColumnNames()) ?? [:])
    /// A page a waiting pull brought (live sync), applied by the next sync's pull when it
    /// follows the store's cursor.
    var prefetchedPage: (cursor: String, page: PullResponse)?
    /// What the server said of itself in this engine's first handshake (`GET /v1/capabilities`).
    var capabilities: ServerCapabilities?
    /// The server's clock minus this machine's, from the last answer (ms).
    let clockOffset = Locked<Int64?>(nil)
    /// The store's pending local changes as this sync's pulls tell the server
    /// (`Tandem-Pending`), counted once its push is done; `nil` before.
    let reportedPending = Locked<Int?>(nil)

    /// - Parameter now: milliseconds since 1970 (injected for tests).
    public init(
        container: ModelContainer, transport: any Transport, configuration: SyncConfiguration,
        logger: Logger = Logger(label: "tandem.sync"),
        now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }
    ) {
        self.container = container
        self.transport = transport
        self.configuration = configuration
        self.logger = logger
        self.clock = now
        // Read once: every request's path names it.
        dataset = configuration.dataset.map { DatasetReference($0)?.pathSegment ?? $0 } ?? container.dataset
        clientID = Self.clientID(of: container)
    }

    /// This store's id to the server (`Tandem-Client`, on every request): its clock node,
    /// 16 hex digits, as its stamps carry it. The operator's dashboard lists clients by it.
    public nonisolated let clientID: String

    /// The ``clientID`` a store's engine sends, without an engine (`tandem status`).
    ///
    /// ```swift
    /// print(SyncEngine.clientID(of: container))   // "00003f2a9c1e77b0"
    /// ```
    public static func clientID(of container: ModelContainer) -> String {
        HLCTimestamp.nodeText(container.hlcNode)
    }

    /// The dataset in request paths: the store's own (`todos`), or one shared with this
    /// user, named `OWNER/NAME` in the configuration and `OWNER~NAME` in paths.
    nonisolated let dataset: String

    /// Pushes local changes, then pulls until the store has everything the server has.
    ///
    /// - Throws: ``SyncError``, or `CancellationError` when the calling task was cancelled
    ///   (the exchange in flight is abandoned). What was acknowledged or applied before the
    ///   error stays; the next sync continues from there.
    public func sync() async throws -> SyncSummary { try await run(resyncing: false) }

    /// Starts again with the server without wiping the store: pushes every record of the
    /// store again, with its stored stamps (the merge keeps the newer value of each, so
    /// nothing the server holds is overwritten by an older one), then pulls the dataset's log
    /// from the start. Unpushed local edits go as in any sync. For a replica that is stuck
    /// or doubtful: after the server's data was restored from an old backup in a way it
    /// cannot see, after the store's cursor was lost, after moving to another server (whose
    /// answer to the old cursor is `cursor_other_dataset`). Resumable: a resync cut short
    /// goes on at the next sync. `tandem resync` runs it.
    ///
    /// ```swift
    /// let summary = try await engine.resync()   // summary.resynced == true
    /// ```
    ///
    /// - Throws: ``SyncError``, as ``sync()``.
    public func resync() async throws -> SyncSummary { try await run(resyncing: true) }

    private func run(resyncing: Bool) async throws -> SyncSummary {
        // One sync at a time: actor methods interleave at every await, and two syncs would
        // read the same cursor. A caller that arrives during a sync waits for it, then runs.
        while let current = running {
            try await Self.waitUnlessCancelled(for: current)
            if running == current { running = nil }  // its caller may not have resumed yet
        }
        try Task.checkCancellation()
        let task = Task { try await self.syncOnce(resyncing: resyncing) }
        running = task
        defer { if running == task { running = nil } }
        // Cancelling the caller cancels its sync (an app's background time running out): the
        // exchange in flight is abandoned, and what was not acknowledged is pushed again,
        // under the same keys, by the next sync.
        return try await task.valueCancellingWithCaller()
    }

    private var running: Task<SyncSummary, any Error>?

    /// Waits until `task` ends, or throws `CancellationError` as soon as the caller is
    /// cancelled (awaiting a task's value alone waits for it whatever happens to the caller).
    /// `task` is another caller's sync: it is not cancelled.
    private static func waitUnlessCancelled(for task: Task<SyncSummary, any Error>) async throws {
        let waiter = Locked<CheckedContinuation<Void, Never>?>(nil)
        let resume: @Sendable () -> Void = { waiter.withLock { $0.take()?.resume() } }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                waiter.withLock { $0 = continuation }
                // Cancelled before the continuation was kept: the handler found none.
                if Task.isCancelled { resume() }
                Task {
                    _ = try? await task.value
                    resume()
                }
            }
        } onCancel: {
            resume()
        }
        try Task.checkCancellation()
    }

    private func syncOnce(resyncing: Bool) async throws -> SyncSummary {
        do {
            return try await syncSteps(resyncing: resyncing)
        } catch let error as SyncError where error.status == 404 {
            // The dataset is not on the server (deleted since the handshake): the next sync
            // makes the handshake again (an owner's makes a new dataset of the name, which
            // the cursor's resync then fills from this store).
            schemaVersion = nil
            throw error
        }
    }

    private func syncSteps(resyncing: Bool) async throws -> SyncSummary {
        // A configuration error stops every sync, not only those with something to decide.
        _ = try storedPolicies()
        // One sync of the store at a time, across processes too.
        let file = container.configurations.first
        let lock = try await StoreSyncLock.acquire(for: file?.isStoredInMemoryOnly == false ? file?.url : nil, logger: logger)
        defer { lock?.release() }
        try prepare()
        reportedPending.withLock { $0 = nil }
        var summary = SyncSummary()
        summary.schemaVersion = try await handshake()
        if resyncing {
            // As after a restore (``resync(schemaVersion:because:)``), on request: this
            // sync's push sends every record (``pushSnapshotIfNeeded(schemaVersion:)``) and
            // its pull starts from the start; both resume after a cut.
            logger.notice("resyncing on request: pushing the store's records again and pulling from the start")
            try startResync(requested: true)
            summary.resynced = true
            summary.resyncReason = .requested
        }
        // Values pulled before this store's schema could show them, shown now that it can.
        let shownKept = try applyKept()
        // With conflict policies, pull first: the policies must see pulled values against
        // local edits that are not pushed yet (once pushed, the newer stamp has already won).
        let policiesFirst = !configuration.conflictPolicies.isEmpty || !configuration.updateWinsOverDelete.isEmpty
        var pushed = PushResult()
        var pulled = policiesFirst ? try await pullResyncing(schemaVersion: summary.schemaVersion, &summary, &pushed) : ChangeApplier.Outcome()
        // Local changes the server refused before go first; then the journal's. A refusal of
        // stamps ahead of the server's clock: stamped again with the server's time and
        // pushed again (a second refusal means the repair did not help: thrown).
        let version = summary.schemaVersion
        // In rounds of ``quarantineRetryLimit``: while a whole round is taken (a reader made a
        // writer, say), the next round goes too, so one sync drains what the server now takes;
        // a round it still refuses ends the retries for this sync.
        for _ in 0..<1_000 {
            let round = try await repairingClock { try await self.retryQuarantined(schemaVersion: version) }
            pushed.add(round)
            guard round.pushed >= Self.quarantineRetryLimit, round.quarantined == 0 else { break }
        }
        pushed.add(try await repairingClock { try await self.push(schemaVersion: version) })
        // What `tandem status` would say now, told to the server on this sync's pulls.
        let pending = try SyncStatus.pendingChanges(of: container)
        reportedPending.withLock { $0 = pending }
        let beforePull = try historyToken()
        var after = try await pullResyncing(schemaVersion: version, &summary, &pushed)
        let retried = try retryPulledQuarantineWhileItShrinks()
        after.applied += retried.applied
        after.conflicts += retried.conflicts
        // Edits the pull itself decided (a policy's, a delete rule's, a merge's carried
        // values): pushed now, so a sync that returns has every local change on the server.
        if after.applied + after.conflicts + retried.applied > 0, hasLocalChanges(after: beforePull) {
            pushed.add(try await repairingClock { try await self.push(schemaVersion: version) })
        }
        do {
            try acknowledgePulled(after: try container.syncAcknowledged())
        } catch {
            // Only saves later syncs some reading: the sync itself succeeded.
            logger.warning("could not acknowledge the pulled history; the next sync tries again", metadata: ["error": "\(error)"])
        }
        pulled.applied += after.applied
        pulled.conflicts += after.conflicts
        pulled.quarantined += after.quarantined
        summary.pushed = pushed.pushed
        summary.resyncPushRefused = pushed.resyncPushRefused
        summary.conflicts = pushed.conflicts + pulled.conflicts
        summary.pulled = pulled.applied + shownKept
        let waiting = try read { db in try SyncStore.quarantineCounts(db) }
        (summary.waitingLocal, summary.waitingPulled, summary.keptForNewerSchema) = (waiting.local, waiting.pulled, waiting.kept)
        // Put in the quarantine by this sync and still there (a pulled change the retry after
        // the pull applied is not counted).
        summary.quarantined = min(pulled.quarantined + pushed.quarantined, summary.waitingLocal + summary.waitingPulled)
        summary.clockOffset = clockOffset.withLock { $0 }
        if let offset = summary.clockOffset, abs(offset) >= Self.clockWarningMilliseconds {
            logger.warning("this machine's clock is \(abs(offset) / 1000) s \(offset > 0 ? "behind" : "ahead of") the server's; edits are stamped with the server's time. Correct the clock (NTP)")
        }
        if summary.waitingLocal > 0 {
            logger.warning(
                "local changes the server refused are waiting in the quarantine; they are sent again on every sync (tandem quarantine list)",
                metadata: ["changes": "\(summary.waitingLocal)"])
        }
        let now = loggedNow()
        try store { db in try SyncState.update(db) { $0.lastSync = now } }
        logger.info(
            "synced",
            metadata: [
                "pushed": "\(summary.pushed)", "pulled": "\(summary.pulled)",
                "conflicts": "\(summary.conflicts)", "quarantined": "\(summary.quarantined)",
            ])
        return summary
    }

    /// Pulls; when the server says the store's cursor is not of its data's history (its
    /// data was restored or copied since), resyncs and pulls from the start.
    private func pullResyncing(schemaVersion: Int, _ summary: inout SyncSummary, _ pushed: inout PushResult) async throws -> ChangeApplier.Outcome {
        do {
            return try await pull()
        } catch let error as SyncError where error.needsResync {
            pushed.add(try await resync(schemaVersion: schemaVersion, because: error))
            summary.resynced = true
            summary.resyncReason = error.serverCode == "cursor_dataset_deleted" ? .datasetMadeAgain : .serverDataRestored
            return try await pull()
        }
    }

    /// After the server's data was restored from a backup or copied (its answer `error`):
    /// pushes every record of the store again, with its stored stamps (the restored data may
    /// lack changes this store pushed after the backup; the merge keeps the newer value of
    /// each), and starts pulling from the start. Unpushed local edits stay in the journal and
    /// are pushed as usual. A crash midway resumes the resync at the next sync.
    ///
    /// Records this store deleted after the backup are back on the server, and come back
    /// here with the pull (the delete is not in the restored data, and this store keeps no
    /// tombstones of its own deletes).
    ///
    /// - Throws: ``SyncError`` when the pushes fail.
    func resync(schemaVersion: Int, because error: SyncError) async throws -> PushResult {
        logger.warning(
            "the server's data is not the history this store synced with (restored from a backup or copied); resyncing: pushing the store's records again and pulling from the start",
            metadata: ["server": "\(error.message)"])
        try startResync()
        return try await pushSnapshotIfNeeded(schemaVersion: schemaVersion)
    }

    /// Marks a resync in the store (it survives a cut): the next push sends every record
    /// (``pushSnapshotIfNeeded(schemaVersion:)``, under the resync's own keys) and the pull
    /// starts from the start.
    ///
    /// A `requested` one (the history the store pulled is the server's, unless the server
    /// says otherwise) keeps what it had pulled, to be checked against the server when the
    /// pull starts (``checkReplay()``): positions up to the first pulled change not decided
    /// yet (one waiting in the quarantine or kept for a newer schema is decided when applied,
    /// and a conflict it makes is logged then). One the server asked for (a restore, a deleted
    /// dataset) replays another history: nothing is kept. A resync under way keeps its own.
    private func startResync(requested: Bool = false) throws {
        try store { db in
            let undecided = try Int64.fetchOne(
                db,
                sql: """
                    SELECT min(position) FROM (SELECT min(position) AS position FROM tandem_sync_quarantine WHERE position IS NOT NULL
                    UNION ALL SELECT min(position) FROM tandem_sync_kept)
                    """)
            try SyncState.update(db) {
                if !requested {
                    ($0.replayThrough, $0.replayCursor) = (0, "")
                } else if !$0.cursor.isEmpty, $0.bootstrapMode == 0 {
                    // Checked against the cursor it has now: an earlier replay's positions
                    // are of the same history if the server still takes it.
                    let pulled = min($0.pulledThrough, (undecided ?? .max) - 1)
                    ($0.replayThrough, $0.replayCursor) = (max(pulled, $0.replayThrough), $0.cursor)
                } else if $0.replayCursor.isEmpty {
                    $0.replayThrough = 0  // nothing to check it against
                }
                if $0.resync.isEmpty { $0.resyncRequested = requested }
                $0.cursor = ""
                $0.pulledThrough = 0
                // A bootstrap cut short belongs to the history before: it starts again.
                $0.bootstrapMode = 0
                $0.bootstrap = ""
                $0.bootstrapSwept = ""
                $0.snapshotPushed = false
                if $0.resync.isEmpty { $0.resync = UUID().uuidString.lowercased() }
            }
        }
    }

    /// Before each pull of a requested resync until its first page is in: whether the server
    /// still takes the cursor the store had (`GET …/lag`: same dataset, same epoch, not past
    /// the head), so the positions it had pulled are the history it pulls again. If not (or
    /// the server cannot say), nothing is taken for replayed; a failure that may pass (the
    /// server unreachable, busy) fails the sync, to be asked again. Once a page is in, the
    /// cursor it brought holds the history: a restore or a deleted dataset since is refused
    /// at the next pull, whose resync takes nothing for replayed.
    func checkReplay() async throws {
        guard let state = try read({ db in try SyncState.read(db) }), !state.replayCursor.isEmpty, state.cursor.isEmpty else { return }
        do {
            _ = try await lag(after: state.replayCursor)
            return
        } catch is CancellationError {
            throw CancellationError()
        } catch let error as SyncError where error.isTransient {
            throw error
        } catch {
            logger.info("the server no longer takes the store's old cursor: the resync's pull logs its conflicts as any pull", metadata: ["error": "\(error)"])
        }
        try store { db in try SyncState.update(db) { ($0.replayThrough, $0.replayCursor) = (0, "") } }
    }

    // MARK: Store access

    func store<T>(_ body: (Database) throws -> T) throws -> T {
        try storeFailure { try container.write(author: SyncStore.author, body) }
    }

    /// ``store(_:)`` journaled as one marker (`context`): a bootstrap's page.
    func storeUnjournaled<T>(context: String, _ body: (Database) throws -> T) throws -> T {
        try storeFailure { try container.writeUnjournaled(author: SyncStore.author, context: context, body) }
    }

    /// Applies the delete rules of the references pulled deletes left dangling (kept page by
    /// page, ``SyncStore/saveDangling(_:_:)``, this pull's and any cut short before it) once a
    /// pull is caught up; returns the conflicts it logged.
    ///
    /// `cursor`: where this pull caught up. The references are decided only while the store
    /// is still there (no bootstrap under way, the cursor not moved on): were another
    /// process pulling the same store meanwhile (its lock could not be taken), a later page
    /// might point them elsewhere, and that process decides them when it catches up.
    /// `applier` is made only when some wait (an idle pull has none made).
    func resolveDangling(with applier: @autoclosure () throws -> ChangeApplier, caughtUpAt cursor: String?) throws -> Int {
        guard try read({ db in try SyncStore.hasDangling(db) }) else { return 0 }
        let applier = try applier()
        return try storeFailure {
            try container.write(author: "sync.resolve") { db in
                guard let state = try SyncState.read(db), state.bootstrapMode == 0, cursor == nil || state.cursor == cursor else { return 0 }
                return try applier.resolveDangling(try SyncStore.takeDangling(db), db)
            }
        }
    }

    /// `body`, its failure a ``SyncError`` (code `store` unless it is one already).
    private func storeFailure<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as SyncError { throw error } catch {
            throw SyncError(.store, "the store failed: \(error)")
        }
    }

    func read<T>(_ body: (Database) throws -> T) throws -> T {
        do { return try container.read(body) } catch let error as SyncError { throw error } catch {
            throw SyncError(.store, "the store failed: \(error)")
        }
    }

    private func prepare() throws {
        guard !prepared else { return }
        // A shared dataset (OWNER/NAME) keeps its own name in every member's record URIs.
        let configured = configuration.dataset.map { DatasetReference($0) } ?? DatasetReference(owner: nil, name: container.dataset)
        guard configured?.name == container.dataset else {
            throw SyncError(
                .misconfigured,
                "the store belongs to dataset '\(container.dataset)'; its record URIs name it, so it syncs only with dataset '\(container.dataset)' (or OWNER/\(container.dataset), shared with you), not '\(configuration.dataset ?? "")'"
            )
        }
        try store { db in try SyncStore.create(db) }
        do {
            if try !container.historyReaders().contains(where: { $0.name == SyncStore.reader }) {
                try container.registerHistoryReader(SyncStore.reader, acknowledged: .start)
            }
        } catch {
            throw SyncError(.store, "the store failed: \(error)")
        }
        prepared = true
    }

    // MARK: HTTP

    nonisolated func call(_ method: String, _ path: String, body: Data? = nil, headers: [String: String] = [:]) async throws -> TransportResponse {
        let token: String
        do { token = try await configuration.token() } catch {
            throw SyncError(.misconfigured, "the sync token could not be read: \(error)")
        }
        let bearer = token.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !bearer.isEmpty, bearer.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else {
            throw SyncError(.misconfigured, "the sync token is empty or has spaces or control characters inside; check the token file")
        }
        var headers = headers
        headers["Authorization"] = "Bearer \(bearer)"
        headers["Tandem-Client"] = clientID
        if body != nil { headers["Content-Type"] = "application/json" }
        let sent = ContinuousClock.now
        let response = try await transport.send(TransportRequest(method: method, path: path, headers: headers, body: body))
        if let serverTime = response.serverTime {
            let roundTrip = ContinuousClock.now - sent
            learn(serverTime: serverTime, roundTripMilliseconds: roundTrip.components.seconds * 1000 + roundTrip.components.attoseconds / 1_000_000_000_000_000)
        }
        switch response.status {
        case 200..<300: return response
        default: throw Self.error(for: response, method: method, path: path)
        }
    }

    static func error(for response: TransportResponse, method: String, path: String) -> SyncError {
        let detail = try? JSONDecoder().decode(WireErrorBody.self, from: response.body).error
        let body = String(decoding: response.body.prefix(300), as: UTF8.self)
        // A web page: another server (or a proxy) answered, not a Tandem sync server.
        let page = body.drop(while: \.isWhitespace).hasPrefix("<")
        let message =
            detail.map { "\($0.code): \($0.message)" }
            ?? (page ? "a web page (\(response.headers["content-type"] ?? "no content type")), not a Tandem sync server's answer" : body)
        let what = "\(method) \(path.split(separator: "?").first ?? "") answered \(response.status): \(message)"
        // No such address (a Tandem server's route-less 404, or another server's): the
        // server's URL is wrong, which no retry mends.
        if response.status == 404, detail == nil || detail?.code == "http_error" {
            return SyncError(
                .misconfigured, what + ". Check the server's URL: a tandem-server's root (http://HOST:PORT, without /v1), behind any proxy's path",
                status: response.status)
        }
        if detail?.code == "quota_exceeded" {
            return SyncError(
                .quotaExceeded, what + ". Local changes stay pending until the server's operator raises the quota", status: response.status,
                serverCode: detail?.code)
        }
        if let code = detail?.code, code == "not_shared" || code == "role_too_low" {
            // The server's message says who gives access.
            return SyncError(.unauthorized, what, status: response.status, serverCode: code)
        }
        switch detail?.code {
        case "token_expired":
            return SyncError(
                .unauthorized, what + ". Get a new token (tandem-server tokens create NAME), or a new JWT (sign in again)", status: response.status,
                serverCode: "token_expired")
        case "token_scope":
            return SyncError(
                .unauthorized, what + ". Use a token made for this dataset (tandem-server tokens create NAME --dataset OWNER/NAME)", status: response.status,
                serverCode: "token_scope")
        case "read_only_token":
            // The server's message says what to do (a Tandem server's does).
            let advice = message.localizedCaseInsensitiveContains("token that is not") ? "" : ". Push with a token that is not read-only"
            return SyncError(.unauthorized, what + advice, status: response.status, serverCode: "read_only_token")
        default: break
        }
        switch response.status {
        case 401, 403: return SyncError(.unauthorized, what + ". Check the token (tandem-server tokens create NAME)", status: response.status)
        case 429, 500...: return SyncError(.serverUnavailable, what, status: response.status, retryAfter: response.headers["retry-after"].flatMap(Double.init))
        default:
            if detail?.code == "clock_skew" {
                var error = SyncError(.clockSkew, what, status: response.status, serverCode: detail?.code)
                error.serverTime = detail?.serverTime
                error.maxClockSkew = detail?.maxClockSkew
                return error
            }
            if detail?.code == "schema_incompatible" {
                let rules = detail?.findings?.map { "\($0.rule) at \($0.path)" }.joined(separator: "; ") ?? ""
                return SyncError(
                    .schemaIncompatible, "the store's schema breaks sync with the dataset's registered versions: \(rules). Fix the model or migrate the data, then sync again", status: response.status)
            }
            return SyncError(.rejected, what, status: response.status, serverCode: detail?.code)
        }
    }

    // MARK: Clock

    /// Remembers the server's time from an answer (the journal stamps with it from then on),
    /// and what it says of this machine's clock. A store that cannot record it goes on
    /// stamping with its own clock: the sync itself is not at stake.
    nonisolated func learn(serverTime: Int64, roundTripMilliseconds: Int64 = 0) {
        do {
            let reading = try container.recordServerTime(serverTime, roundTripMilliseconds: roundTripMilliseconds)
            clockOffset.withLock { $0 = reading.offset }
        } catch {
            logger.warning("could not record the server's time", metadata: ["error": "\(error)"])
        }
    }

    /// Runs `send` (a push of local changes); when the server refuses stamps ahead of its
    /// clock, repairs them (``repairClock(after:)``) and runs it once more: a second refusal
    /// means the repair did not help, and is thrown.
    func repairingClock<T>(_ send: () async throws -> T) async throws -> T {
        do {
            return try await send()
        } catch let error as SyncError where error.code == .clockSkew {
            try repairClock(after: error)
            return try await send()
        }
    }

    /// How far this machine's clock may be from the server's before a sync warns (ms).
    static let clockWarningMilliseconds: Int64 = 60_000

    /// The time the conflict log, the quarantine and the sync state record: this machine's
    /// clock corrected by the server's once an answer told it (a machine whose clock is a day
    /// off still logs its conflicts at the world's time).
    nonisolated func loggedNow() -> Int64 {
        clock() + (clockOffset.withLock { $0 } ?? 0)
    }

    /// Stamps again what the server refused as ahead of its clock, below its limit (see
    /// ``ModelContainer/restampLocalChanges(above:after:)``), and the local changes waiting
    /// in the quarantine for the same reason.
    func repairClock(after error: SyncError) throws {
        // The answer's Tandem-Server-Time was learned already, with its round trip.
        guard let serverTime = error.serverTime, repairsClock else { throw error }
        let skew = max(0, error.maxClockSkew ?? 0)
        let ceiling = HLCTimestamp(physical: UInt64(max(0, serverTime + skew)), counter: .max, node: .max)
        let acknowledged = try container.syncAcknowledged()
        let replaced: [HLCTimestamp: HLCTimestamp]
        do { replaced = try container.restampLocalChanges(above: ceiling, after: acknowledged, including: try quarantinedStamps()) } catch let error as SyncError {
            throw error
        } catch {
            throw SyncError(.store, "the store failed: \(error)")
        }
        try restampQuarantined(replaced)
        logger.warning(
            "the server refused stamps ahead of its clock; stamped \(replaced.count) again with the server's time and pushing again",
            metadata: ["serverTime": "\(serverTime)"])
    }

    // MARK: Schema handshake

    /// The dataset's version number of this store's schema, registering it when missing;
    /// first, once per engine, the server's capabilities (its protocol and limits).
    func handshake() async throws -> Int {
        if let schemaVersion { return schemaVersion }
        if capabilities == nil {
            let response = try await call("GET", "/v1/capabilities")
            // Every answer of a tandem-server carries its clock: without it, another server
            // answered (a wrong URL), which no retry mends.
            guard response.serverTime != nil else {
                throw SyncError(
                    .misconfigured,
                    "GET /v1/capabilities answered \(response.status), but not as a tandem-server does (no Tandem-Server-Time). Check the server's URL: a tandem-server's root (http://HOST:PORT)"
                )
            }
            let answer = try Self.decode(ServerCapabilities.self, response)
            guard answer.maxChangesPerPush >= 1, answer.maxPageSize >= 1, answer.maxBodyBytes >= 1 else {
                throw SyncError(
                    .invalidResponse,
                    "the server's capabilities allow no change per push, page or body (\(answer.maxChangesPerPush), \(answer.maxPageSize), \(answer.maxBodyBytes)); fix the server's limits")
            }
            guard answer.protocolVersion == WireProtocol.version else {
                throw SyncError(
                    .unsupportedProtocol, "the server speaks sync protocol \(answer.protocolVersion); this Tandem speaks \(WireProtocol.version). Use a Tandem and a tandem-server of the same protocol"
                )
            }
            capabilities = answer
        }
        let path = "/v1/datasets/\(dataset)"
        _ = try await call("PUT", path)
        // Registered as declared (class names, originalNames), as `tandem schema publish`
        // registers it from the sources.
        let canonical = try container.declaredSchema.canonicalJSON()
        let history = try Self.decode(SchemaHistory.self, try await call("GET", path + "/schema"))
        // The newest version this store's schema is: the same, or the same with what the
        // running app cannot see (cases of enums that are not CaseIterable) listed, as
        // `tandem schema publish` registers it from the sources.
        let matching = history.versions(of: container.declaredSchema, canonical: String(decoding: canonical, as: UTF8.self))
        if let same = matching.last(where: { $0.published == nil }) {
            (schemaVersion, publishedEnumCases) = (same.version, [:])
            return same.version
        }
        if let newest = matching.last {
            // Several versions can differ only in cases this app cannot list (a release that
            // added a case): the app may be any of them, so it shows only the cases all of
            // them have, and keeps the others aside.
            (schemaVersion, publishedEnumCases) = (newest.version, Self.enumCases(of: container.declaredSchema, in: matching.compactMap(\.published)))
            return newest.version
        }
        let registration = try Self.decode(SchemaRegistration.self, try await call("PUT", path + "/schema", body: canonical))
        logger.info("registered the store's schema", metadata: ["version": "\(registration.version)"])
        schemaVersion = registration.version
        return registration.version
    }

    static func decode<T: Decodable>(_ type: T.Type, _ response: TransportResponse) throws -> T {
        do { return try JSONDecoder().decode(T.self, from: response.body) } catch {
            throw SyncError(.invalidResponse, "the server's answer is not a \(T.self): \(error)")
        }
    }
}

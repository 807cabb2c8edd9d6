import Foundation
import Metrics
import NIOConcurrencyHelpers
import Hummingbird
import NIOCore
import NIOPosix
import HTTPTypes
import TandemGzip
import TandemSchema
import TandemWire

/// The handlers of protocol v1.
struct Routes: Sendable {
    let dependencies: ServerDependencies
    let schemas = SchemaCache()
    /// Compatibility checks run one at a time, outside any transaction, and one per user at
    /// most: a tenant's large schema takes one core for its turn, never the write lock, and
    /// a tenant's many requests cannot queue ahead of the others.
    var checks: WorkLimiter { dependencies.schemaChecks }
    var storage: any ServerStorage { dependencies.storage }
    var configuration: ServerConfiguration { dependencies.configuration }

    // MARK: Helpers

    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try json(encoder.encode(value), status: status)
    }

    static func json(_ data: Data, status: HTTPResponse.Status = .ok) throws -> Response {
        json(ByteBuffer(bytes: data), status: status)
    }

    static func json(_ buffer: ByteBuffer, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: buffer))
    }

    /// The body, refused with 413 past the limit: by `Content-Length` before anything is read,
    /// else while reading. A `Content-Encoding: gzip` body is inflated, and the inflated size
    /// is held to the same limit (a small body cannot expand into a huge one).
    func body(_ request: Request) async throws -> Data {
        let limit = configuration.maxBodyBytes
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit {
            throw APIError(.contentTooLarge, "body_too_large", "the body is \(length) bytes; the limit is \(limit)")
        }
        let encoding = request.headers[.contentEncoding]?.trimmingCharacters(in: .whitespaces).lowercased() ?? "identity"
        guard ["identity", "gzip", "x-gzip"].contains(encoding) else {
            throw APIError(.unsupportedMediaType, "unsupported_encoding", "Content-Encoding '\(encoding)' is not supported; send gzip or no encoding")
        }
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: limit)
        } catch {
            throw APIError(.contentTooLarge, "body_too_large", "the body exceeds the limit of \(limit) bytes")
        }
        guard encoding != "identity" else { return Data(buffer.readableBytesView) }
        do {
            return Data(try Gzip.decompress(buffer.readableBytesView, limit: limit))
        } catch  where error.code == .tooLarge {
            throw APIError(.contentTooLarge, "body_too_large", "the gzip body inflates past the limit of \(limit) bytes")
        } catch {
            throw APIError.badRequest("invalid_encoding", "the body is not valid gzip: \(error.message)")
        }
    }

    func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch let error as DecodingError {
            throw APIError.badRequest("invalid_json", "the body is not a valid \(T.self): \(error.tandemDescription)")
        } catch {
            throw APIError.badRequest("invalid_json", "the body is not JSON: \(error.localizedDescription)")
        }
    }

    /// The dataset named in the path (`NAME`: the caller's own; `OWNER~NAME`: one shared with
    /// the caller) if the caller's role allows `needed`: 404 when there is no such dataset,
    /// and for another user's dataset when the caller is no member of it (or no longer one:
    /// read on every request, so a removal takes effect at once), the same answer whether it
    /// exists or not (a stranger learns nothing of other users' datasets); 403 when the
    /// token's scope or the caller's role does not allow it.
    func dataset(_ context: TandemRequestContext, needs needed: DatasetRole = .reader) async throws -> DatasetAccess {
        let reference = try datasetReference(context)
        let user = try context.requireUser()
        // Made only when refused: this runs on every dataset request.
        func notShared() -> APIError {
            APIError(
                .notFound, "not_shared",
                "no dataset '\(reference)' is shared with you: it does not exist, or its owner or an admin has not shared it with you or has removed you (tandem-server datasets share)"
            )
        }
        var owner = user
        if let ownerName = reference.owner, ownerName != user.name {
            guard let found = try await storage.user(named: ownerName) else { throw notShared() }
            owner = found
        }
        guard let id = try await storage.datasetID(owner: owner.id, name: reference.name) else {
            guard owner.id == user.id else { throw notShared() }
            throw APIError.notFound("no dataset '\(reference.name)': create it with PUT /v1/datasets/\(reference.name)")
        }
        let role = owner.id == user.id ? .admin : try await storage.role(dataset: id, user: user.id)
        guard let role else { throw notShared() }
        guard context.scope.allows(dataset: id) else {
            throw APIError(.forbidden, "token_scope", "this token is limited to other datasets; use a token made for '\(reference)' (tandem-server tokens create --dataset)")
        }
        let access = DatasetAccess(reference: reference, id: id, owner: owner, role: role)
        try require(needed, of: access, context)
        return access
    }

    /// 403 `role_too_low` unless the caller's role in the dataset allows `needed`, and
    /// `read_only_token` for a read-only token where more than reading is needed.
    func require(_ needed: DatasetRole, of access: DatasetAccess, _ context: TandemRequestContext) throws {
        guard access.role.allows(needed) else {
            throw APIError(
                .forbidden, "role_too_low",
                "your role in '\(access.reference)' is \(access.role.rawValue); this needs \(needed.rawValue) (an admin of the dataset changes roles)")
        }
        if needed > .reader { try requireWritableToken(context) }
    }

    /// A path parameter, percent-decoded (a client may send `ann%7Etodos` for `ann~todos`).
    static func pathParameter(_ name: String, _ context: TandemRequestContext) -> String {
        let raw = context.parameters.get(name) ?? ""
        return raw.removingPercentEncoding ?? raw
    }

    /// Refuses a read-only token (403 `read_only_token`).
    func requireWritableToken(_ context: TandemRequestContext) throws {
        guard !context.scope.readOnly else {
            throw APIError(.forbidden, "read_only_token", "this token is read-only: it pulls, and changes nothing; push with a token that is not (tandem-server tokens create without --read-only)")
        }
    }

    func datasetReference(_ context: TandemRequestContext) throws -> DatasetReference {
        guard let reference = DatasetReference(pathSegment: Self.pathParameter("dataset", context)) else {
            throw APIError.badRequest(
                "invalid_dataset",
                "dataset names are 1–128 letters, digits, '-', '_' or '.', and not '.' or '..'; a dataset shared with you is OWNER~NAME")
        }
        return reference
    }

    // MARK: Handlers

    func health() async throws -> Response {
        do {
            try await storage.checkHealth()
            return try Self.json(["status": "ok"])
        } catch {
            // A load balancer takes the node out until the database answers again.
            var response = try Self.json(
                WireErrorBody(error: .init(code: "unavailable", message: "the database cannot be read; see the server's log")),
                status: .serviceUnavailable)
            response.headers[.retryAfter] = "1"
            return response
        }
    }

    /// `GET /v1/capabilities`: the protocol version, this server's limits, and the additions
    /// to v1 it has (``ServerCapabilities/features``).
    func capabilities() throws -> Response {
        try Self.json(
            ServerCapabilities(
                maxChangesPerPush: configuration.maxChangesPerPush, maxPageSize: configuration.maxPageSize,
                maxBodyBytes: configuration.maxBodyBytes,
                maxClockSkewMilliseconds: configuration.maxClockSkewMilliseconds,
                features: ["mergedFrom", "cursorEpochs", "pullWait", "sharing", "datasetDelete", "snapshot", "client-activity", "pushCursor"],
                maxPullWaitSeconds: Int(configuration.maxPullWait.components.seconds)))
    }

    /// `GET /v1/datasets`: the datasets the caller owns or is a member of (those its token
    /// reaches), each with its owner and the caller's role.
    func listDatasets(_ context: TandemRequestContext) async throws -> Response {
        let reachable = try await storage.datasets(reachableBy: try context.requireUser().id)
        return try Self.json(DatasetList(datasets: reachable.filter { context.scope.allows(dataset: $0.id) }.map(\.info)))
    }

    /// `DELETE /v1/datasets/{dataset}`: by its owner only. The dataset is gone at once for
    /// everyone (404; waiting pulls answer it at once); its data is purged in short steps
    /// after the answer.
    func deleteDataset(_ context: TandemRequestContext) async throws -> Response {
        let dataset = try await dataset(context, needs: .admin)
        guard dataset.owner.id == (try context.requireUser()).id else {
            throw APIError(.forbidden, "not_owner", "only the owner of '\(dataset.reference)' deletes it; an admin may leave it (DELETE …/members/YOU)")
        }
        guard try await storage.deleteDataset(id: dataset.id) else { throw APIError.notFound("no dataset '\(dataset.reference)'") }
        storage.logSignals.notify(dataset: dataset.id)
        let storage = self.storage
        let logger = context.logger
        // Each step one short transaction; what a failure or a shutdown leaves, the
        // maintenance service purges.
        Task {
            do {
                try await storage.purgeDeletedDatasets()
            } catch {
                logger.warning("purging a deleted dataset stopped; the maintenance service goes on with it", metadata: ["error": "\(error)"])
            }
        }
        return Response(status: .noContent)
    }

    func createDataset(_ context: TandemRequestContext) async throws -> Response {
        let reference = try datasetReference(context)
        let user = try context.requireUser()
        let name = reference.name
        let own = reference.owner == nil || reference.owner == user.name
        let limited = context.scope.datasets != nil || context.scope.readOnly
        if own, limited, try await storage.datasetID(owner: user.id, name: name) == nil {
            try requireWritableToken(context)
            throw APIError(.forbidden, "token_scope", "this token is limited to some datasets and creates none; create '\(name)' with an unlimited token")
        }
        if !own || limited {
            // Never made here (another user's dataset, or by a limited token): the one that
            // exists is answered to those it is shared with.
            let access = try await dataset(context, needs: .reader)
            guard let info = try await storage.datasets(owner: access.owner.id).first(where: { $0.name == name }) else {
                throw APIError.notFound("no dataset '\(reference)'")
            }
            return try Self.json(info)
        }
        let (info, created) = try await storage.createDataset(
            owner: user.id, name: name, now: dependencies.now(), limit: user.quota.limits(configuration).datasets)
        return try Self.json(info, status: created ? .created : .ok)
    }

    func push(_ request: Request, _ context: TandemRequestContext) async throws -> Response {
        let started = ContinuousClock.now
        // The dataset as a reader may reach it: a push its role or token refuses is one of
        // the dashboard's refused changes too.
        let dataset = try await dataset(context)
        do {
            try require(.writer, of: dataset, context)
            try await checkPushCursor(request, dataset)
            return try await push(request, context, dataset: dataset, started: started)
        } catch {
            // A refused push (as the error middleware answers it: the storage's refusals
            // too), for the dashboard's recent events; a batch cut to the server's cap is the
            // engine's routine, not a refusal.
            let answer = (error as? APIError) ?? (error as? StorageError).map(APIError.init)
            if let answer, (400..<500).contains(answer.status.code), answer.body.error.code != "batch_too_large" {
                dependencies.activity.event(
                    dataset: dataset.id, owner: dataset.owner.id, client: context.client, user: try context.requireUser().name, kind: .refused,
                    text: "\(answer.body.error.code): \(answer.body.error.message)")
            }
            throw error
        }
    }

    private func push(
        _ request: Request, _ context: TandemRequestContext, dataset: DatasetAccess, started: ContinuousClock.Instant
    ) async throws -> Response {
        guard let sentKey = request.headers[HTTPField.Name("Idempotency-Key")!], (1...200).contains(sentKey.count) else {
            throw APIError.badRequest("missing_idempotency_key", "a push needs an Idempotency-Key header (1–200 characters) that stays the same on retry")
        }
        // Each member's keys are their own: two members can never collide.
        let key = "\(try context.requireUser().id):\(sentKey)"
        let data = try await body(request)
        let push: PushRequest
        do {
            push = try WireJSONReader.pushRequest(data)
        } catch {
            throw APIError.badRequest("invalid_json", "the body is not a valid PushRequest: \(error)")
        }
        guard push.changes.count <= configuration.maxChangesPerPush else {
            throw APIError(.contentTooLarge, "batch_too_large", PushRequest.tooManyChangesMessage(push.changes.count, cap: configuration.maxChangesPerPush))
        }
        var canonical = WireJSON()
        var spans: [WireJSON.ChangeSpan] = []
        canonical.append(push, spans: &spans)
        let storage = self.storage
        guard
            let schema = try await schemas.schema(
                dataset: dataset.id, version: push.schemaVersion,
                load: { try await storage.schemaHistory(dataset: dataset.id) })
        else {
            throw APIError(
                .conflict, "unknown_schema_version",
                "schema version \(push.schemaVersion) is not registered for '\(dataset.reference)'; register it with PUT /v1/datasets/\(dataset.reference.pathSegment)/schema")
        }
        let now = dependencies.now()
        var configured = PushProcessor(
            datasetName: dataset.name, cursorScope: storage.cursorScope(of: dataset.id), schemaVersion: push.schemaVersion, schema: schema,
            now: now, maxClockSkew: configuration.maxClockSkewMilliseconds)
        configured.resync = push.resync == true
        let processor = configured
        let (changes, stamps) = try processor.validate(push.changes)
        // The canonical text is of the changes as sent: a change validation rewrote is
        // written anew when logged.
        let unchanged: [Bool] = zip(push.changes, changes).map { (sent: WireChange, validated: WireChange) -> Bool in
            sent.record == validated.record && sent.mergedInto == validated.mergedInto && sent.mergedFrom == validated.mergedFrom
        }
        // The hash of the request in canonical form, as validated: the same push with its
        // JSON members in another order, or its URIs in another case, is the same push.
        let requestHash: String
        if unchanged.allSatisfy({ $0 }) {
            requestHash = SHA256Hex.of(canonical.bytes)
        } else {
            var validated = push
            validated.changes = changes
            var rewritten = WireJSON()
            rewritten.append(validated)
            requestHash = SHA256Hex.of(rewritten.bytes)
        }
        let text = PushProcessor.CanonicalText(
            bytes: canonical.bytes,
            spans: zip(spans, unchanged).map { (span: WireJSON.ChangeSpan, same: Bool) -> WireJSON.ChangeSpan? in same ? span : nil })
        let plan = PushPlan(schema: schema, datasetName: dataset.name)
        let counts = NIOLockedValueBox((applied: 0, lost: 0, lostResponse: PushResponse?.none))
        // A dataset's bytes count against its owner's quota, whoever pushes.
        let byteLimit = dataset.owner.quota.limits(configuration).bytes
        let job = PushJob(reads: plan.reads(for: changes), changes: changes.count, byteLimit: byteLimit) { workspace in
            let result = try processor.apply(changes, stamps: stamps, plan: plan, canonical: text, outcomes: push.outcomes, to: &workspace)
            counts.withLockedValue { $0 = (result.applied, result.lost, result.lost > 0 ? result.response : nil) }
            return WireJSON.data { $0.append(result.response) }
        }
        let stored: StoredPush
        do {
            stored = try await storage.push(dataset: dataset.id, key: key, requestHash: requestHash, now: now, changes: push.changes.count, job: job)
        } catch let refusal as PushRefusal {
            throw APIError.invalid(refusal.code, refusal.message)
        }
        if stored.replayed && stored.requestHash != requestHash {
            throw APIError.invalid("idempotency_key_reused", "the Idempotency-Key '\(sentKey)' was used for a different push; use a new key for new changes")
        }
        let metrics = dependencies.metrics
        metrics.pushes.increment()
        if !stored.replayed { storage.logSignals.notify(dataset: dataset.id) }
        if stored.replayed {
            metrics.pushReplays.increment()
        } else {
            let (applied, lost, lostResponse) = counts.withLockedValue { $0 }
            metrics.changesApplied.increment(by: applied)
            metrics.valuesLost.increment(by: lost)
            let user = try context.requireUser().name
            dependencies.activity.pushed(dataset: dataset.id, owner: dataset.owner.id, client: context.client, user: user, schemaVersion: push.schemaVersion, changes: push.changes.count)
            if let lostResponse {
                // Described after the push's transaction, which holds the dataset's gate.
                dependencies.activity.event(
                    dataset: dataset.id, owner: dataset.owner.id, client: context.client, user: user, kind: .conflict,
                    text: Self.describeLost(lostResponse, changes: changes))
            }
        }
        metrics.pushDuration.record(duration: ContinuousClock.now - started)
        return try Self.json(stored.response)
    }

    /// "2 values lost: Todo/… title (to a newer value), …": the first three of a push's lost
    /// values, for the dashboard's recent events.
    static func describeLost(_ response: PushResponse, changes: [WireChange]) -> String {
        var total = 0
        var named: [String] = []
        for (index, outcome) in response.indexedOutcomes(count: changes.count) ?? [] where !outcome.lost.isEmpty {
            total += outcome.lost.count
            let record = changes[index].record.split(separator: "/").suffix(2).joined(separator: "/")
            for value in outcome.lost where named.count < 3 {
                named.append("\(record) \(value.attribute) (\(value.toDelete ? "to a delete" : "to a newer value"))")
            }
        }
        return "\(total) value\(total == 1 ? "" : "s") lost: " + named.joined(separator: ", ") + (total > named.count ? ", …" : "")
    }

    /// The `wait` of a pull, cut to the configured maximum (zero without one): decimal
    /// seconds, given once.
    private func pullWait(_ values: [String]) throws -> Duration {
        guard let text = values.first else { return .zero }
        let maximum = configuration.maxPullWait.components.seconds
        let decimal = text.utf8.allSatisfy { $0 == UInt8(ascii: ".") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        guard values.count == 1, decimal, text.utf8.filter({ $0 == UInt8(ascii: ".") }).count <= 1, let seconds = Double(text), seconds.isFinite else {
            throw APIError.badRequest(
                "invalid_wait",
                "wait must be given once, as decimal seconds such as 25 or 2.5 (more than \(maximum) is cut to \(maximum), this server's longest wait)")
        }
        return min(.milliseconds(Int64(min(seconds, 86_400) * 1000)), configuration.maxPullWait)
    }

    /// Live sync: waits until a push to the dataset commits after `after`, `wait` passes, the
    /// client goes away or the server shuts down, then reads the page again. A ticket is
    /// taken before each read, so a push between the read and the wait still wakes it.
    ///
    /// - Throws: 429 `too_many_waiting` when the user has the most waiting pulls allowed.
    private func waitForEntries(dataset: Int64, after: Int64, limit: Int, for wait: Duration, _ context: TandemRequestContext) async throws -> PulledPage {
        let user = try context.requireUser()
        let signals = storage.logSignals
        let metrics = dependencies.metrics
        let deadline = ContinuousClock.now + wait
        metrics.waitingPulls.increment()
        defer { metrics.waitingPulls.decrement() }
        var woken = false
        while true {
            let ticket: LogSignals.Ticket
            do {
                ticket = try signals.ticket(
                    dataset: dataset, after: after, user: user.id, limit: configuration.maxWaitingPullsPerUser, connection: context.connection)
            } catch {
                // Woken, but another pull of the user's took the place meanwhile: it answers
                // what is there rather than a refusal.
                if woken { return try await storage.pullJSON(dataset: dataset, after: after, limit: limit, maxBytes: configuration.maxPageBytes) }
                var refusal = APIError(
                    .tooManyRequests, "too_many_waiting",
                    "this user has \(error.limit) pulls waiting for changes already (the most this server allows); stop other waiting clients or pull without wait")
                refusal.headers[.retryAfter] = "5"
                throw refusal
            }
            let page: PulledPage
            do {
                page = try await storage.pullJSON(dataset: dataset, after: after, limit: limit, maxBytes: configuration.maxPageBytes)
            } catch {
                ticket.cancel()
                throw error
            }
            let left = deadline - ContinuousClock.now
            guard page.lastPosition == nil, left > .zero, !signals.isClosing else {
                ticket.cancel()
                return page
            }
            // A graceful shutdown ends every wait at once (WaitingPullsService), and so do
            // the connection's close (ConnectionGuard) and the task's cancellation.
            woken = await ticket.wait(for: left, timer: MultiThreadedEventLoopGroup.singleton.any())
            ticket.cancel()
            // A token revoked or expired while its pull waited, and a member removed
            // meanwhile, get nothing that arrived meanwhile, nor a cursor to go on with.
            if let token = context.tokenID, try await storage.token(id: token) == nil {
                throw APIError.unauthorized("unknown or revoked token")
            }
            if context.scope.hasExpired(at: dependencies.now()) { throw context.tokenID == nil ? APIError.jwtExpired : APIError.tokenExpired }
            // Deleted (and perhaps made again) while it waited: answered at once.
            guard try await self.dataset(context, needs: .reader).id == dataset else {
                throw APIError.notFound("the dataset was deleted while the pull waited")
            }
            guard woken else { return page }
        }
    }

    /// Refuses a cursor of another dataset or another epoch (409).
    func check(_ decoded: Cursor, of dataset: DatasetAccess) async throws {
        let scope = storage.cursorScope(of: dataset.id)
        guard try await isOwnDataset(decoded, dataset) else {
            // A cursor of a dataset of this name and owner that was deleted (and made
            // again since): the client starts again, as after a restore.
            throw APIError(
                .conflict, "cursor_dataset_deleted",
                "the cursor is of the dataset '\(dataset.reference)' that was deleted and made again since: resync from the start, pushing the store's records into the new one (tandem sync does this by itself)"
            )
        }
        // Positions after a restored head are written again with other changes: a client
        // of the history before must start again rather than skip them.
        guard decoded.scope.epoch == scope.epoch else {
            throw APIError(
                .conflict, "cursor_epoch",
                "the cursor is from an earlier history of this server's data (it was restored from a backup or copied since this client last synced): resync from the start, pushing the store's records again (tandem sync does this by itself)"
            )
        }
    }

    /// Whether `decoded` is a cursor of `dataset` (`true`) or of a dataset of its owner and
    /// name deleted since (`false`); any other dataset's cursor stops the sync: the store is
    /// another dataset's replica (409 `cursor_other_dataset`).
    func isOwnDataset(_ decoded: Cursor, _ dataset: DatasetAccess) async throws -> Bool {
        guard decoded.scope.tag != storage.cursorScope(of: dataset.id).tag else { return true }
        let deleted = try await storage.deletedDatasetIDs(owner: dataset.owner.id, name: dataset.name)
        if deleted.contains(where: { storage.cursorScope(of: $0).tag == decoded.scope.tag }) { return false }
        throw APIError(
            .conflict, "cursor_other_dataset",
            "the cursor belongs to another dataset: the store synced another dataset than '\(dataset.reference)' (another owner's, or on another server). Sync it with that one (its server and dataset); to make it a replica of '\(dataset.reference)' instead, resync it with this one (tandem resync), which pushes its records and unpushed edits here"
        )
    }

    /// Refuses a push from a store whose cursor (`Tandem-Cursor`, the last one it pulled) is
    /// of another dataset: its edits belong to that one, and once taken here they would be
    /// pushed, acknowledged, and never reach it (a sync run with the wrong `--dataset` or
    /// `--server`). A cursor of a dataset of this name deleted since is taken: the client
    /// resyncs into this one at its pull.
    ///
    /// - Throws: 400 `invalid_cursor`, 409 `cursor_other_dataset`.
    func checkPushCursor(_ request: Request, _ dataset: DatasetAccess) async throws {
        guard let text = request.headers[HTTPField.Name("Tandem-Cursor")!], !text.isEmpty else { return }
        guard let decoded = Cursor(text) else {
            throw APIError.badRequest("invalid_cursor", "the Tandem-Cursor header is not a cursor; send the store's last nextCursor, or no header")
        }
        _ = try await isOwnDataset(decoded, dataset)
    }

    /// 410 `cursor_expired`: the log after `position` was compacted up to `first - 1`.
    static func cursorExpired(after position: Int64) -> APIError {
        APIError(
            .gone, "cursor_expired",
            "the log after this cursor (position \(position)) was compacted: the entries it needs are folded into the records. Bootstrap again from GET …/snapshot, keeping the store's unpushed edits (tandem sync does this by itself)"
        )
    }

    /// `GET …/lag?after=CURSOR`: how many log entries follow the cursor (all of them without
    /// one). A client's `tandem status --server` shows it; the dashboard counts the same from
    /// the client's last pull.
    ///
    /// - Throws: 400 `invalid_cursor`, 409 as for a pull's cursor (another dataset or epoch,
    ///   or past the head).
    func lag(_ request: Request, _ context: TandemRequestContext) async throws -> Response {
        let dataset = try await dataset(context)
        let scope = storage.cursorScope(of: dataset.id)
        let after = try await position(of: request.uri.queryParameters["after"], in: dataset)
        let head = try await storage.logHead(dataset: dataset.id)
        // A cursor the compaction passed is expired here as on a pull.
        if try await storage.compaction(dataset: dataset.id).compactedThrough > after { throw Self.cursorExpired(after: after) }
        guard after <= head else { throw Self.cursorAhead(after: after, head: head) }
        return try Self.json(DatasetLag(behind: head - after, head: head == 0 ? "" : Cursor(scope, position: head).text, serverTime: dependencies.now()))
    }

    /// The log position of a request's `after` cursor (0 without one), checked to be this
    /// dataset's.
    ///
    /// - Throws: 400 `invalid_cursor`, 409 as ``check(_:of:)`` refuses it.
    func position(of cursor: Substring?, in dataset: DatasetAccess) async throws -> Int64 {
        guard let cursor, !cursor.isEmpty else { return 0 }
        guard let decoded = Cursor(String(cursor)) else {
            throw APIError.badRequest("invalid_cursor", "'\(cursor)' is not a cursor; pass a nextCursor from an earlier pull, or nothing to start")
        }
        try await check(decoded, of: dataset)
        return decoded.position
    }

    /// 409 `cursor_ahead`: the cursor is past the end of the log, which was replaced or
    /// restored from an older copy since the cursor was handed out.
    static func cursorAhead(after: Int64, head: Int64) -> APIError {
        APIError(
            .conflict, "cursor_ahead",
            "the cursor is at position \(after), past the end of this dataset's log (\(head)): the server's data was replaced or restored from an older copy since this client last synced: resync from the start, pushing the store's records again (tandem sync does this by itself)"
        )
    }

    func pull(_ request: Request, _ context: TandemRequestContext) async throws -> Response {
        let started = ContinuousClock.now
        let requestedAt = dependencies.now()
        let dataset = try await dataset(context)
        let query = request.uri.queryParameters
        let scope = storage.cursorScope(of: dataset.id)
        let after = try await position(of: query["after"], in: dataset)
        var limit = min(configuration.defaultPageSize, configuration.maxPageSize)
        if let text = query["limit"] {
            guard let value = Int(String(text)), value >= 1 else {
                throw APIError.badRequest("invalid_limit", "limit must be a whole number from 1 to \(configuration.maxPageSize)")
            }
            limit = min(value, configuration.maxPageSize, Int(Int32.max))
        }
        let wait = try pullWait(query.getAll("wait"))
        var page = try await storage.pullJSON(dataset: dataset.id, after: after, limit: limit, maxBytes: configuration.maxPageBytes)
        // Positions are dense: a first entry past the next position means those between were
        // compacted (a log always keeps its last entry, so a stale cursor finds one).
        if let first = page.firstPosition, first > after + 1 { throw Self.cursorExpired(after: after) }
        // A cursor past the end of the log is from another log: the server's data was
        // replaced or restored from an older copy. Answering it with an empty page would let
        // its client believe it is in sync with a server that lacks its changes.
        if page.lastPosition == nil, after > 0 {
            let head = try await storage.logHead(dataset: dataset.id)
            if after > head { throw Self.cursorAhead(after: after, head: head) }
        }
        if page.lastPosition == nil, wait > .zero {
            page = try await waitForEntries(dataset: dataset.id, after: after, limit: limit, for: wait, context)
            // Compacted while it waited (a tight --log-retention-entries): as above.
            if let first = page.firstPosition, first > after + 1 { throw Self.cursorExpired(after: after) }
        } else {
            dependencies.metrics.pullDuration.record(duration: ContinuousClock.now - started)
        }
        // Position 0 is the start, written as the empty cursor (as push echoes write it),
        // unless the client sent a cursor: one at 0 (a bootstrap of an empty dataset ends
        // there) stays a cursor, so the client does not take itself for one that never pulled.
        let position = page.lastPosition ?? after
        let next = position == 0 && (query["after"] ?? "").isEmpty ? "" : Cursor(scope, position: position).text
        dependencies.metrics.changesPulled.increment(by: page.count)
        dependencies.activity.pulled(
            dataset: dataset.id, owner: dataset.owner.id, client: context.client, user: try context.requireUser().name, position: position, changes: page.count,
            requestedAt: requestedAt)
        let serverTime = dependencies.now()
        // The entries as logged (their stamps as pushed), copied once, into the answer.
        var tail = WireJSON()
        tail.pullResponseTail(hasMore: page.hasMore, nextCursor: next, serverTime: serverTime)
        var body = ByteBufferAllocator().buffer(capacity: WireJSON.pullResponseHead.utf8CodeUnitCount + page.json.count + tail.bytes.count)
        body.writeStaticString(WireJSON.pullResponseHead)
        body.writeBytes(page.json)
        body.writeBytes(tail.bytes)
        return Self.json(body)
    }
}

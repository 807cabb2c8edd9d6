import Foundation
import Hummingbird
import NIOCore
import TandemSchema
import TandemWire

/// A dataset's schema versions: the history, and registering a version, checked against
/// every earlier one outside the server's write transaction.
extension Routes {
    func schemaHistory(_ context: TandemRequestContext) async throws -> Response {
        let dataset = try await dataset(context)
        return try Self.json(SchemaHistory(versions: try await storage.schemaHistory(dataset: dataset.id)))
    }

    func registerSchema(_ request: Request, _ context: TandemRequestContext) async throws -> Response {
        let dataset = try await dataset(context, needs: .writer)
        let user = try context.requireUser()
        // One registration per user at a time, refused before its body is read or parsed.
        do {
            try await checks.reserve(user.id)
        } catch is WorkLimiter.Busy {
            var error = APIError(
                .tooManyRequests, "schema_check_busy",
                "a schema registration of this user's is running or waiting already (one at a time per user); send this one when it ends")
            error.headers[.retryAfter] = "1"
            throw error
        }
        do {
            let response = try await registerSchema(request, context, dataset: dataset, user: user)
            await checks.release(user.id)
            return response
        } catch {
            await checks.release(user.id)
            throw error
        }
    }

    private func registerSchema(
        _ request: Request, _ context: TandemRequestContext, dataset: DatasetAccess, user: ServerUser
    ) async throws -> Response {
        // The dataset's owner's limits, whoever registers.
        let limits = dataset.owner.quota.limits(configuration)
        let stored = try await storage.storedBytes(owner: dataset.owner.id)
        guard stored < limits.bytes else { throw StorageError.byteQuota(stored: stored, limit: limits.bytes) }
        // Too many bytes is refused before they are read, or parsed.
        if let length = request.headers[.contentLength].flatMap({ Int($0) }) { try checkSize(bytes: length) }
        let data = try await body(request)
        try checkSize(bytes: data.count)
        let schema: Schema
        do {
            schema = try Schema(canonicalJSON: data)
        } catch let error as SchemaError {
            throw APIError.badRequest(error.code == .unsupportedFormatVersion ? "unsupported_schema_format" : "invalid_schema", error.message)
        }
        try checkSize(of: schema)
        if let problem = schema.structuralProblem {
            throw APIError.invalid("invalid_schema", problem)
        }
        let canonical = String(decoding: try schema.canonicalJSON(), as: UTF8.self)
        // Checked against the history outside any transaction, then committed in a short one
        // that holds only if no other version came meanwhile (else checked again).
        var history = try await storage.schemaHistory(dataset: dataset.id)
        let limit = limits.schemaVersions
        for _ in 0..<8 {
            if let known = Self.knownVersion(of: schema, canonical: canonical, in: history) {
                return try Self.json(SchemaRegistration(version: known, created: false))
            }
            guard history.count < limit else {
                throw APIError(
                    .forbidden, "quota_exceeded",
                    "'\(dataset.reference)' has \(history.count) schema versions, the most this server allows its owner (the operator sets it with tandem-server users quota NAME --schema-versions N, or serve --max-schema-versions)"
                )
            }
            let checked = history
            do {
                // Dropped when the client goes away: while it waits its turn, or between
                // versions of the history.
                try await Self.cancellingWhenClosed(context.connectionClosed) {
                    try await checks.run { try Self.checkCompatible(schema, with: checked) }
                }
            } catch is CancellationError {
                dependencies.metrics.schemaChecksCancelled.increment()
                throw APIError(.serviceUnavailable, "cancelled", "the client went away; the schema was not checked")
            }
            if let registration = try await storage.registerSchema(dataset: dataset.id, json: canonical, now: dependencies.now(), after: history.count) {
                await schemas.forget(dataset: dataset.id)
                dependencies.metrics.schemasRegistered.increment()
                return try Self.json(registration, status: .created)
            }
            history = try await storage.schemaHistory(dataset: dataset.id)
        }
        throw APIError(.conflict, "schema_contended", "other schema versions of '\(dataset.reference)' kept arriving during the check; send it again")
    }

    /// The newest registered version `schema` is (the same, or the same but for what a
    /// running app cannot see: enum cases of types that are not CaseIterable, registered
    /// from the sources by `tandem schema publish`), if any.
    static func knownVersion(of schema: Schema, canonical: String, in history: [SchemaVersionInfo]) -> Int? {
        if history.last?.schema == canonical { return history.last?.version }
        return SchemaHistory(versions: history).versions(of: schema, canonical: canonical).last?.version
    }

    /// Runs `body` in a task that is cancelled when `closed` completes (the client's
    /// connection closed) or the caller is cancelled.
    static func cancellingWhenClosed<T: Sendable>(_ closed: EventLoopFuture<Void>, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let task = Task { try await body() }
        closed.whenComplete { _ in task.cancel() }
        return try await withTaskCancellationHandler {
            try await task.value
        } onCancel: {
            task.cancel()
        }
    }

    /// Refuses a schema of more bytes than the configured limit (413 `schema_too_large`).
    func checkSize(bytes: Int) throws {
        try refuseSchema(bytes, over: configuration.maxSchemaBytes, "bytes", "--max-schema-bytes")
    }

    /// Refuses a schema of more entities, or attributes and relationships, than the
    /// configured limits (413 `schema_too_large`, naming the limit).
    func checkSize(of schema: Schema) throws {
        let members = schema.entities.reduce(0) { $0 + $1.attributes.count + $1.relationships.count }
        try refuseSchema(schema.entities.count, over: configuration.maxSchemaEntities, "entities", "--max-schema-entities")
        try refuseSchema(members, over: configuration.maxSchemaMembers, "attributes and relationships", "--max-schema-members")
    }

    private func refuseSchema(_ size: Int, over limit: Int, _ what: String, _ option: String) throws {
        guard size > limit else { return }
        throw APIError(
            .contentTooLarge, "schema_too_large", "the schema has \(size) \(what); this server takes at most \(limit) (tandem-server serve \(option))")
    }

    /// Refuses `schema` (409 `schema_incompatible`, with the findings) when it breaks sync
    /// with a version of `history`; the message says when the versions it breaks evolved
    /// from it compatibly (an older app joining after a newer one: updating it is the way). Linear in the schemas' sizes; stops when the task is
    /// cancelled (the client went away).
    static func checkCompatible(_ schema: Schema, with history: [SchemaVersionInfo]) throws {
        var baselines: [CompatibilityCheck.Baseline] = []
        for version in history {
            try Task.checkCancellation()
            baselines.append(CompatibilityCheck.Baseline(name: "version \(version.version)", schema: try Schema(canonicalJSON: Data(version.schema.utf8))))
        }
        let report = CompatibilityCheck().run(baselines: baselines, candidate: schema)
        guard report.isCompatible else {
            let findings = report.breaking.prefix(100).map {
                WireErrorBody.Finding(rule: $0.rule, path: $0.path, verdict: $0.verdict.rawValue, message: $0.message, hint: $0.hint)
            }
            let listed = findings.prefix(10).map { "\($0.rule) at \($0.path)" }.joined(separator: "; ")
            let broken = Set(report.breaking.flatMap(\.baselines))
            // An app older than every version it breaks (a user's old device joining after
            // their new one): those evolved from it compatibly, and updating the app is the way.
            let older = baselines.filter { broken.contains($0.name) }.allSatisfy { baseline in
                CompatibilityCheck().run(baselines: [CompatibilityCheck.Baseline(name: "the candidate", schema: schema)], candidate: baseline.schema).isCompatible
            }
            let advice =
                older
                ? " (this schema is older than those versions, which evolved from it compatibly: an app of this older version syncs once it is updated; its unsynced edits wait for it)"
                : ""
            throw APIError(
                .conflict, "schema_incompatible",
                "the schema breaks sync with \(broken.sorted().joined(separator: ", "))\(advice): \(listed)"
                    + (report.breaking.count > 10 ? " (and \(report.breaking.count - 10) more)" : ""),
                findings: Array(findings))
        }
    }
}

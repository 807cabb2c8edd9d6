import Foundation
import TandemSchema
import TandemWire

/// Parsed schema versions by dataset and version, for pushes. Registered versions never
/// change, so a push parses its schema once per server process, not once per request.
///
/// Bounded and fair: it keeps the `capacity` datasets used last; schemas are parsed in the
/// asking request's task, never inside the cache; and a version the dataset did not have is
/// remembered as missing for `recheck`, so pushes naming an unregistered version cost one
/// history read per dataset per `recheck`, not one each. A registration on this server
/// forgets the dataset's entry at once.
///
/// ```swift
/// let schema = try await cache.schema(dataset: id, version: 3) { try await storage.schemaHistory(dataset: id) }
/// ```
actor SchemaCache {
    private struct Entry {
        var versions: [Int: Schema]
        /// When the dataset's history was last read.
        var readAt: ContinuousClock.Instant
        var lastUse: UInt64
    }

    enum Lookup {
        case found(Schema)
        /// Not a version the dataset had when its history was read, less than `recheck` ago.
        case missing
        case unknown(have: Set<Int>)
    }

    private var entries: [Int64: Entry] = [:]
    private var uses: UInt64 = 0
    let capacity: Int
    let recheck: Duration

    init(capacity: Int = 256, recheck: Duration = .seconds(1)) {
        self.capacity = max(capacity, 1)
        self.recheck = recheck
    }

    /// The schema `version` of `dataset` as the wire names it (``Schema/onTheWire``: renamed
    /// attributes under their first name), reading the history with `load` on a miss; `nil`
    /// when the dataset has no such version.
    ///
    /// - Throws: what `load` throws, or ``SchemaError`` for a stored version that does not
    ///   parse.
    nonisolated func schema(dataset: Int64, version: Int, load: @Sendable () async throws -> [SchemaVersionInfo]) async throws -> Schema? {
        let have: Set<Int>
        switch await lookup(dataset, version) {
        case .found(let schema): return schema
        case .missing: return nil
        case .unknown(let known): have = known
        }
        let history = try await load()
        var parsed: [Int: Schema] = [:]
        for info in history where !have.contains(info.version) {
            // As the wire names it: renamed attributes under their first name.
            parsed[info.version] = try Schema(canonicalJSON: Data(info.schema.utf8)).onTheWire
        }
        return await store(dataset, parsed, wanted: version)
    }

    /// Forgets `dataset`'s versions (a version was registered).
    func forget(dataset: Int64) {
        entries[dataset] = nil
    }

    /// How many datasets are kept (for tests).
    var count: Int { entries.count }

    private func lookup(_ dataset: Int64, _ version: Int) -> Lookup {
        guard var entry = entries[dataset] else { return .unknown(have: []) }
        uses += 1
        entry.lastUse = uses
        entries[dataset] = entry
        if let schema = entry.versions[version] { return .found(schema) }
        if ContinuousClock.now - entry.readAt < recheck { return .missing }
        return .unknown(have: Set(entry.versions.keys))
    }

    private func store(_ dataset: Int64, _ parsed: [Int: Schema], wanted: Int) -> Schema? {
        uses += 1
        var entry = entries[dataset] ?? Entry(versions: [:], readAt: .now, lastUse: uses)
        entry.versions.merge(parsed) { _, new in new }
        entry.readAt = .now
        entry.lastUse = uses
        entries[dataset] = entry
        if entries.count > capacity, let oldest = entries.min(by: { $0.value.lastUse < $1.value.lastUse })?.key {
            entries[oldest] = nil
        }
        return entry.versions[wanted]
    }
}

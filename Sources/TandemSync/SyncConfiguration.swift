/// What a ``SyncEngine`` syncs with, and how.
///
/// ```swift
/// let configuration = SyncConfiguration(dataset: "todos", token: { try String(contentsOfFile: "/etc/tandem/token").trimmed })
/// ```
public struct SyncConfiguration: Sendable {
    /// The dataset on the server: the store's own dataset name by default, or `OWNER/NAME` for
    /// a dataset another user shares with this one (`NAME` being the store's dataset: record
    /// URIs are the same on every member's replica).
    public var dataset: String?
    /// Returns the bearer token (read from a file or the environment; called per sync).
    public var token: @Sendable () async throws -> String
    /// Changes per push (the server's default cap is 5 000; a server that refuses a batch as
    /// too large gets it in halves, and smaller batches from then on). 2 500 pushed 100 000
    /// changes about 8 % faster than 1 000 in the benchmark (docs/benchmarks.md).
    public var pushBatchSize = 2_500
    /// The most bytes of JSON per push (the server's default body cap is 8 MiB).
    public var pushBatchBytes = 4 << 20
    /// Pushes in flight at once, in a sliding window (each batch holds whole records, so they
    /// never overlap): the server reads the next batch while it writes one. Two by default,
    /// about 10–20 % faster than one in the benchmark (docs/benchmarks.md); after a lost
    /// answer, up to this many batches are sent again (with the same keys, so they replay).
    public var pushesInFlight = 2
    /// The most journal changes gathered before pushing (bounds memory on a large backlog).
    /// A push's first range holds one window of batches, so the first is sent at once; the
    /// next ones double up to this.
    public var pushRangeChanges = 20_000
    /// Changes per pull page (the server caps it at its maximum: 5 000 by default, 1 000
    /// before). 5 000 pulled 100 000 changes about 9 % faster than 1 000 in the benchmark.
    public var pullPageSize = 5_000
    /// Conflict policies by `"Entity"` or `"Entity.column"` (the column's wins); last writer
    /// wins where none is set. A renamed model is named by its class name or its first name
    /// (`originalName`). See ``ConflictPolicy``.
    public var conflictPolicies: [String: ConflictPolicy] = [:]
    /// Entities where an unpushed local edit newer than a pulled delete brings the record
    /// back (re-inserted as a new local edit) instead of the delete winning.
    public var updateWinsOverDelete: Set<String> = []
    /// Called as a sync progresses (for progress bars).
    public var progress: (@Sendable (SyncProgress) -> Void)?

    public init(dataset: String? = nil, token: @escaping @Sendable () async throws -> String) {
        self.dataset = dataset
        self.token = token
    }
}

/// Where a running sync is.
public enum SyncProgress: Sendable, Hashable {
    case pushed(changes: Int, of: Int)
    case pulled(changes: Int, hasMore: Bool)
}

/// The server's limits and behaviour; every field has a production default.
///
/// ```swift
/// var configuration = ServerConfiguration()
/// configuration.maxBodyBytes = 4 << 20
/// ```
public struct ServerConfiguration: Sendable, Hashable {
    /// Requests with a larger body get 413 before the body is read.
    public var maxBodyBytes = 8 << 20
    /// Changes per push (the sync engine sends 2 500 by default).
    public var maxChangesPerPush = 5_000
    /// The largest `limit` of a pull; larger ones are capped to it (the sync engine asks for
    /// 5 000 by default).
    public var maxPageSize = 5_000
    /// The page size of a pull without `limit`.
    public var defaultPageSize = 100
    /// Records per snapshot page when the client asks for no limit.
    public var defaultSnapshotPageSize = 1_000
    /// How much of each dataset's log is kept (`serve --log-retention`,
    /// `--log-retention-entries`); 30 days by default.
    public var compaction = CompactionPolicy(keepMilliseconds: 30 * 86_400_000)
    /// A pull page ends once its entries reach this many bytes (an entry larger than this
    /// still goes out, alone), so a pull's memory is bounded whatever its entries hold.
    public var maxPageBytes = 4 << 20
    /// The largest schema a dataset registers: its JSON in bytes, its entities, and its
    /// attributes and relationships over all entities. Larger: 413 `schema_too_large`.
    public var maxSchemaBytes = 4 << 20
    public var maxSchemaEntities = 2_000
    public var maxSchemaMembers = 50_000
    /// Datasets a user may create, and schema versions a dataset may register: past them,
    /// 403 `quota_exceeded`. `tandem-server users quota` sets other limits for one user.
    public var maxDatasetsPerUser = 1_000
    public var maxSchemaVersions = 1_000
    /// Bytes of changes a user's datasets may hold in their logs (10 GiB); past them, pushes
    /// get 403 `quota_exceeded` (checked before each push: one push may end past it).
    public var maxBytesPerUser: Int64 = 10 << 30
    /// The longest `wait` a pull may ask for (live sync: the pull answers when a change
    /// arrives or the wait ends); a longer one is cut to it. A waiting pull is not idle: the
    /// timeouts below do not cut it.
    public var maxPullWait: Duration = .seconds(30)
    /// Pulls one user may have waiting at once (over all their datasets and devices); one
    /// more gets 429 `too_many_waiting`.
    public var maxWaitingPullsPerUser = 64
    /// How long a connection may go without reading anything while it waits for a request
    /// (an idle keep-alive connection, a stalled half-sent request).
    public var idleTimeout: Duration = .seconds(30)
    /// How long a connection may take to send a complete request head, from its opening or
    /// the end of its last answer, however slowly its bytes trickle in (a slowloris client
    /// sending a byte every few seconds is never idle).
    public var headerTimeout: Duration = .seconds(30)
    /// How long a request's body may take to arrive in full after its head.
    public var bodyTimeout: Duration = .seconds(60)
    /// How long `tandem-server serve` waits after SIGTERM or SIGINT for requests in flight
    /// (a half-sent body included) before it cancels them and exits: below systemd's 30 s.
    public var shutdownTimeout: Duration = .seconds(15)
    /// Connections open at once; one past it is closed as it opens. `tandem-server serve`
    /// raises its descriptor limit to the system's hard limit and keeps this below it.
    public var maxConnections = 4_096
    /// How far ahead of the server's clock a stamp may be (milliseconds). Further ahead, the
    /// push is refused with `clock_skew` and the server's time, so the client corrects its
    /// clock instead of winning every conflict until the world catches up.
    public var maxClockSkewMilliseconds: Int64 = 5 * 60 * 1000
    /// Requests per token per second (sustained), and the burst above it; 0 disables the limit.
    public var requestsPerSecond: Double = 50
    public var burst: Double = 100

    /// How long a push's answer is kept for `Idempotency-Key` replays (milliseconds).
    public var idempotencyRetentionMilliseconds: Int64 = 7 * 24 * 3600 * 1000
    /// How often the maintenance service prunes expired answers.
    public var maintenanceInterval: Duration = .seconds(3600)

    public init() {}
}

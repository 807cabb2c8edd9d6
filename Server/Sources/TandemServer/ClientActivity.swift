import NIOConcurrencyHelpers

/// What the operator's dashboard shows of sync traffic that the log does not hold: the
/// clients seen per dataset (their last push and pull, cursor, schema version, pending local
/// changes), recent conflicts and refused changes, pushes and pulls per minute over the last
/// hour, and the node's requests and errors per minute.
///
/// Kept in memory by this node, off the storage's path: each request adds to it under one
/// lock (a few dictionary updates; making room for a new dataset or client scans the
/// dataset's clients or the datasets, at most 1 000, without copying), and every part is
/// bounded so that one user or owner cannot push out what is kept of others: a client is one user's id in one dataset, at most
/// ``maxClientsPerUser`` per user and ``maxClients`` per dataset (the least recently seen go
/// first: the user's own when they hold their share); at most ``maxDatasetsPerOwner`` datasets
/// per owner and ``maxDatasets`` in all (the quietest go: the owner's own when they hold their
/// share); ``maxEvents`` conflicts and as many refusals per dataset, kept apart; ``minutes``
/// one-minute buckets. A client not seen for ``clientRetention`` is left out. A restart starts
/// it empty; on PostgreSQL each node shows what it served.
///
/// ```swift
/// let activity = ClientActivity(now: { Int64(Date().timeIntervalSince1970 * 1000) })
/// activity.pulled(dataset: 1, owner: 1, client: ClientHeaders(id: "3f2a", pending: 0), user: "ann", position: 42, changes: 10)
/// print(activity.dataset(1).clients.first?.position)   // 42
/// ```
public final class ClientActivity: Sendable {
    /// One client of a dataset (one user's id), as it last reached this node.
    public struct Client: Sendable, Hashable {
        /// The id it sends (`Tandem-Client`; the sync engine sends its store's clock node).
        public var id: String
        /// The user whose token it used: another user sending the same id is another client.
        public var user: String
        /// Milliseconds since 1970 of its last push, pull or snapshot page.
        public var lastSeen: Int64
        public var lastPush: Int64?
        public var lastPull: Int64?
        /// The log position its last pull reached: its cursor (a bootstrap's last page sets it).
        public var position: Int64?
        /// When the request that set ``position`` arrived: a pull that waited and ends late
        /// (its client gone) cannot put back an older position a later pull recorded.
        var positionRequestedAt: Int64 = 0
        /// The schema version of its last push.
        public var schemaVersion: Int?
        /// The local changes not on the server yet, as it said on its last pull
        /// (`Tandem-Pending`): what `tandem status` calls pending.
        public var pending: Int?
    }

    /// A conflict (pushed values that lost on the server) or a refused push.
    public struct Event: Sendable, Hashable {
        public enum Kind: String, Sendable, Hashable { case conflict, refused }
        public var at: Int64
        public var kind: Kind
        public var client: String?
        public var user: String
        public var text: String
    }

    /// A count per minute (`minute`: minutes since 1970), kept for the last hour.
    protocol MinuteBucket {
        var minute: Int64 { get }
        init(minute: Int64)
    }

    /// Pushes and pulls of one minute.
    public struct Minute: Sendable, Hashable, MinuteBucket {
        public var minute: Int64
        public var pushes = 0
        public var pulls = 0
        public var changesPushed = 0
        public var changesPulled = 0
    }

    /// Requests this node answered in one minute, and how many were errors.
    public struct RequestMinute: Sendable, Hashable, MinuteBucket {
        public var minute: Int64
        public var requests = 0
        /// 4xx answers.
        public var refused = 0
        /// 5xx answers.
        public var failed = 0
    }

    /// One dataset's activity, newest first.
    public struct DatasetActivity: Sendable, Hashable {
        public var clients: [Client] = []
        /// Conflicts and refusals together, newest first.
        public var events: [Event] = []
        /// The last ``minutes`` minutes, oldest first, every minute present (zero when quiet).
        public var minutes: [Minute] = []
    }

    public static let maxClients = 100
    public static let maxClientsPerUser = 20
    public static let maxDatasets = 1_000
    public static let maxDatasetsPerOwner = 100
    /// Per kind: this many conflicts and this many refusals.
    public static let maxEvents = 10
    public static let minutes = 60
    public static let clientRetention: Int64 = 7 * 24 * 3600 * 1000

    private struct ClientKey: Hashable {
        var user: String
        var id: String
    }

    private struct Recorded {
        var owner: Int64
        var clients: [ClientKey: Client] = [:]
        var conflicts: [Event] = []
        var refusals: [Event] = []
        var minutes: [Minute] = []
        var lastActive: Int64 = 0
    }

    private struct State {
        var datasets: [Int64: Recorded] = [:]
        var datasetsPerOwner: [Int64: Int] = [:]
        var requests: [RequestMinute] = []
    }

    private let state = NIOLockedValueBox(State())
    private let now: @Sendable () -> Int64

    public init(now: @escaping @Sendable () -> Int64) {
        self.now = now
    }

    /// A push of `changes` changes with `schemaVersion`, applied.
    public func pushed(dataset: Int64, owner: Int64, client: ClientHeaders?, user: String, schemaVersion: Int, changes: Int) {
        let at = now()
        record(dataset, owner: owner, at: at) { recorded in
            Self.add(&recorded.minutes, at: at) {
                $0.pushes += 1
                $0.changesPushed += changes
            }
            Self.touch(&recorded.clients, client, user: user, at: at) { seen in
                seen.lastPush = at
                seen.schemaVersion = schemaVersion
            }
        }
    }

    /// A pull (or a snapshot page) answering `changes` entries; `position` is the cursor it
    /// handed out, `nil` for a snapshot page that is not the last; `requestedAt`, when the
    /// request arrived (a waiting pull answers later).
    public func pulled(dataset: Int64, owner: Int64, client: ClientHeaders?, user: String, position: Int64?, changes: Int, requestedAt: Int64? = nil) {
        let at = now()
        let requested = requestedAt ?? at
        record(dataset, owner: owner, at: at) { recorded in
            Self.add(&recorded.minutes, at: at) {
                $0.pulls += 1
                $0.changesPulled += changes
            }
            Self.touch(&recorded.clients, client, user: user, at: at) { seen in
                seen.lastPull = at
                if let position, requested >= seen.positionRequestedAt {
                    seen.position = position
                    seen.positionRequestedAt = requested
                }
                if let pending = client?.pending { seen.pending = pending }
            }
        }
    }

    /// A push whose values lost (`text` says which), or a push refused (`kind` `.refused`).
    public func event(dataset: Int64, owner: Int64, client: ClientHeaders?, user: String, kind: Event.Kind, text: String) {
        let at = now()
        let event = Event(at: at, kind: kind, client: client?.id, user: user, text: String(text.prefix(300)))
        record(dataset, owner: owner, at: at) { recorded in
            switch kind {
            case .conflict: Self.push(event, onto: &recorded.conflicts)
            case .refused: Self.push(event, onto: &recorded.refusals)
            }
        }
    }

    /// One answer of this node, by status.
    public func answered(status: Int) {
        let at = now()
        state.withLockedValue { state in
            Self.add(&state.requests, at: at) { minute in
                minute.requests += 1
                if (400..<500).contains(status) { minute.refused += 1 }
                if status >= 500 { minute.failed += 1 }
            }
        }
    }

    /// What was recorded of `dataset`: clients most recently seen first (those not seen for
    /// ``clientRetention`` left out), events newest first, the last hour minute by minute.
    public func dataset(_ dataset: Int64) -> DatasetActivity {
        let at = now()
        guard let recorded = state.withLockedValue({ $0.datasets[dataset] }) else {
            return DatasetActivity(minutes: Self.hour(ending: at, []))
        }
        return DatasetActivity(
            clients: recorded.clients.values.filter { at - $0.lastSeen <= Self.clientRetention }.sorted {
                ($0.lastSeen, $0.user, $0.id) > ($1.lastSeen, $1.user, $1.id)
            },
            events: (recorded.conflicts + recorded.refusals).sorted { $0.at > $1.at },
            minutes: Self.hour(ending: at, recorded.minutes))
    }

    /// The datasets with activity, the most recently active first, at most `limit`.
    public func activeDatasets(limit: Int) -> [Int64] {
        // A copy (copy on write) taken under the lock, walked outside it.
        let datasets = state.withLockedValue { $0.datasets }
        return datasets.map { ($0.key, $0.value.lastActive) }.sorted { ($0.1, $0.0) > ($1.1, $1.0) }.prefix(limit).map(\.0)
    }

    /// The clients seen of each dataset with activity (those within ``clientRetention``).
    public func clientCounts() -> [Int64: Int] {
        let at = now()
        let datasets = state.withLockedValue { $0.datasets }
        return datasets.mapValues { recorded in recorded.clients.values.reduce(0) { $0 + (at - $1.lastSeen <= Self.clientRetention ? 1 : 0) } }
    }

    /// This node's answers over the last hour, minute by minute, oldest first.
    public func requestMinutes() -> [RequestMinute] {
        Self.hour(ending: now(), state.withLockedValue { $0.requests })
    }

    // MARK: Recording

    private func record(_ dataset: Int64, owner: Int64, at: Int64, _ change: (inout Recorded) -> Void) {
        state.withLockedValue { state in
            if state.datasets[dataset] == nil {
                // Room for it: the owner's quietest when the owner holds their share, else the
                // quietest of all.
                let ownersFull = state.datasetsPerOwner[owner, default: 0] >= Self.maxDatasetsPerOwner
                if ownersFull || state.datasets.count >= Self.maxDatasets,
                    let quietest = state.datasets.lazy.filter({ !ownersFull || $0.value.owner == owner }).min(by: { $0.value.lastActive < $1.value.lastActive })
                {
                    state.datasets[quietest.key] = nil
                    state.datasetsPerOwner[quietest.value.owner, default: 1] -= 1
                    if state.datasetsPerOwner[quietest.value.owner] == 0 { state.datasetsPerOwner[quietest.value.owner] = nil }
                }
                state.datasets[dataset] = Recorded(owner: owner)
                state.datasetsPerOwner[owner, default: 0] += 1
            }
            change(&state.datasets[dataset]!)
            state.datasets[dataset]!.lastActive = at
        }
    }

    private static func touch(_ clients: inout [ClientKey: Client], _ headers: ClientHeaders?, user: String, at: Int64, _ change: (inout Client) -> Void) {
        guard let headers else { return }
        let key = ClientKey(user: user, id: headers.id)
        if clients[key] == nil {
            // Room for it: the user's least recently seen when they hold their share, else
            // the least recently seen of all.
            let usersFull = clients.keys.reduce(0) { $0 + ($1.user == user ? 1 : 0) } >= maxClientsPerUser
            if usersFull || clients.count >= maxClients,
                let oldest = clients.lazy.filter({ !usersFull || $0.key.user == user }).min(by: { $0.value.lastSeen < $1.value.lastSeen })
            {
                clients[oldest.key] = nil
            }
        }
        var client = clients[key] ?? Client(id: headers.id, user: user, lastSeen: at)
        client.lastSeen = at
        change(&client)
        clients[key] = client
    }

    private static func push(_ event: Event, onto events: inout [Event]) {
        events.insert(event, at: 0)
        if events.count > maxEvents { events.removeLast() }
    }

    /// Counts into the bucket of `at`'s minute, the oldest going once there are ``minutes``.
    private static func add<Bucket: MinuteBucket>(_ minutes: inout [Bucket], at: Int64, _ change: (inout Bucket) -> Void) {
        let minute = at / 60_000
        if minutes.last?.minute != minute {
            minutes.append(Bucket(minute: minute))
            if minutes.count > Self.minutes { minutes.removeFirst(minutes.count - Self.minutes) }
        }
        change(&minutes[minutes.count - 1])
    }

    /// The ``minutes`` minutes ending with the minute of `at` (milliseconds), each from
    /// `recorded` or empty.
    static func hour<Bucket: MinuteBucket>(ending at: Int64, _ recorded: [Bucket]) -> [Bucket] {
        let last = at / 60_000
        let byMinute = Dictionary(recorded.map { ($0.minute, $0) }, uniquingKeysWith: { _, newer in newer })
        return (last - Int64(minutes) + 1...last).map { byMinute[$0] ?? Bucket(minute: $0) }
    }
}

// In extensions, so that the memberwise initializers stay.
extension ClientActivity.Minute {
    init(minute: Int64) { self.minute = minute }
}

extension ClientActivity.RequestMinute {
    init(minute: Int64) { self.minute = minute }
}

import NIOConcurrencyHelpers

/// What the operator's dashboard shows of sync traffic that the log does not hold: the
/// clients seen per dataset (their last push and pull, cursor, schema version, pending local
/// changes), recent conflicts and refused changes, pushes and pulls per minute over the last
/// hour, and the node's requests and errors per minute.
///
/// Kept in memory by this node, off the storage's path: each request adds to it under one
/// lock (a few dictionary updates), and every part is bounded: ``maxClients`` clients per
/// dataset (the least recently seen go first), ``maxDatasets`` datasets (the least recently
/// active go), ``maxEvents`` events per dataset, ``minutes`` one-minute buckets; a client not
/// seen for ``clientRetention`` is left out. A restart starts it empty; on PostgreSQL each
/// node shows what it served.
///
/// ```swift
/// let activity = ClientActivity(now: { Int64(Date().timeIntervalSince1970 * 1000) })
/// activity.pulled(dataset: 1, client: ClientHeaders(id: "3f2a", pending: 0), user: "ann", position: 42, changes: 10)
/// print(activity.dataset(1).clients.first?.position)   // 42
/// ```
public final class ClientActivity: Sendable {
    /// One client of a dataset, as it last reached this node.
    public struct Client: Sendable, Hashable {
        /// The id it sends (`Tandem-Client`; the sync engine sends its store's clock node).
        public var id: String
        /// The user whose token it used last.
        public var user: String
        /// Milliseconds since 1970 of its last push, pull, snapshot page or other call.
        public var lastSeen: Int64
        public var lastPush: Int64?
        public var lastPull: Int64?
        /// The log position its last pull reached: its cursor (a bootstrap's last page sets it).
        public var position: Int64?
        /// The schema version of its last push.
        public var schemaVersion: Int?
        /// The local changes not on the server yet, as it said on its last pull
        /// (`Tandem-Pending`): what `tandem status` calls pending.
        public var pending: Int?
    }

    /// A conflict (values that lost) or a refused change, as a push met it.
    public struct Event: Sendable, Hashable {
        public enum Kind: String, Sendable, Hashable { case conflict, refused }
        public var at: Int64
        public var kind: Kind
        public var client: String?
        public var user: String
        public var text: String
    }

    /// Pushes and pulls of one minute (`minute`: minutes since 1970).
    public struct Minute: Sendable, Hashable {
        public var minute: Int64
        public var pushes = 0
        public var pulls = 0
        public var changesPushed = 0
        public var changesPulled = 0
    }

    /// Requests this node answered in one minute, and how many were errors.
    public struct RequestMinute: Sendable, Hashable {
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
        public var events: [Event] = []
        /// The last ``minutes`` minutes, oldest first, every minute present (zero when quiet).
        public var minutes: [Minute] = []
    }

    public static let maxClients = 100
    public static let maxDatasets = 1_000
    public static let maxEvents = 20
    public static let minutes = 60
    public static let clientRetention: Int64 = 7 * 24 * 3600 * 1000

    private struct Recorded {
        var clients: [String: Client] = [:]
        var events: [Event] = []
        var minutes: [Minute] = []
        var lastActive: Int64 = 0
    }

    private struct State {
        var datasets: [Int64: Recorded] = [:]
        var requests: [RequestMinute] = []
    }

    private let state = NIOLockedValueBox(State())
    private let now: @Sendable () -> Int64

    public init(now: @escaping @Sendable () -> Int64) {
        self.now = now
    }

    /// A push of `changes` changes with `schemaVersion`, applied.
    public func pushed(dataset: Int64, client: ClientHeaders?, user: String, schemaVersion: Int, changes: Int) {
        let at = now()
        record(dataset, at: at) { recorded in
            Self.add(&recorded.minutes, at: at) {
                $0.pushes += 1; $0.changesPushed += changes
            }
            Self.touch(&recorded.clients, client, user: user, at: at) { seen in
                seen.lastPush = at
                seen.schemaVersion = schemaVersion
            }
        }
    }

    /// A pull (or a snapshot page) answering `changes` entries; `position` is the cursor it
    /// handed out, `nil` for a snapshot page that is not the last.
    public func pulled(dataset: Int64, client: ClientHeaders?, user: String, position: Int64?, changes: Int) {
        let at = now()
        record(dataset, at: at) { recorded in
            Self.add(&recorded.minutes, at: at) {
                $0.pulls += 1; $0.changesPulled += changes
            }
            Self.touch(&recorded.clients, client, user: user, at: at) { seen in
                seen.lastPull = at
                if let position { seen.position = position }
                if let pending = client?.pending { seen.pending = pending }
            }
        }
    }

    /// A push whose values lost (`text` says which), or a push refused (`kind` `.refused`).
    public func event(dataset: Int64, client: ClientHeaders?, user: String, kind: Event.Kind, text: String) {
        let at = now()
        record(dataset, at: at) { recorded in
            recorded.events.insert(Event(at: at, kind: kind, client: client?.id, user: user, text: String(text.prefix(300))), at: 0)
            if recorded.events.count > Self.maxEvents { recorded.events.removeLast() }
        }
    }

    /// One answer of this node, by status.
    public func answered(status: Int) {
        let minute = now() / 60_000
        state.withLockedValue { state in
            if state.requests.last?.minute != minute {
                state.requests.append(RequestMinute(minute: minute))
                if state.requests.count > Self.minutes { state.requests.removeFirst(state.requests.count - Self.minutes) }
            }
            state.requests[state.requests.count - 1].requests += 1
            if (400..<500).contains(status) { state.requests[state.requests.count - 1].refused += 1 }
            if status >= 500 { state.requests[state.requests.count - 1].failed += 1 }
        }
    }

    /// What was recorded of `dataset`: clients most recently seen first (those not seen for
    /// ``clientRetention`` left out), events newest first, the last hour minute by minute.
    public func dataset(_ dataset: Int64) -> DatasetActivity {
        let at = now()
        let recorded = state.withLockedValue { $0.datasets[dataset] } ?? Recorded()
        return DatasetActivity(
            clients: recorded.clients.values.filter { at - $0.lastSeen <= Self.clientRetention }.sorted { ($0.lastSeen, $0.id) > ($1.lastSeen, $1.id) },
            events: recorded.events,
            minutes: Self.hour(ending: at / 60_000, recorded.minutes.map { ($0.minute, $0) }, empty: { Minute(minute: $0) }))
    }

    /// This node's answers over the last hour, minute by minute, oldest first.
    public func requestMinutes() -> [RequestMinute] {
        let minutes = state.withLockedValue { $0.requests }
        return Self.hour(ending: now() / 60_000, minutes.map { ($0.minute, $0) }, empty: { RequestMinute(minute: $0) })
    }

    // MARK: Recording

    private func record(_ dataset: Int64, at: Int64, _ change: (inout Recorded) -> Void) {
        state.withLockedValue { state in
            if state.datasets[dataset] == nil, state.datasets.count >= Self.maxDatasets,
                let quietest = state.datasets.min(by: { $0.value.lastActive < $1.value.lastActive })?.key
            {
                state.datasets[quietest] = nil
            }
            change(&state.datasets[dataset, default: Recorded()])
            state.datasets[dataset]?.lastActive = at
        }
    }

    private static func touch(_ clients: inout [String: Client], _ headers: ClientHeaders?, user: String, at: Int64, _ change: (inout Client) -> Void) {
        guard let headers else { return }
        if clients[headers.id] == nil, clients.count >= maxClients, let oldest = clients.values.min(by: { $0.lastSeen < $1.lastSeen }) {
            clients[oldest.id] = nil
        }
        var client = clients[headers.id] ?? Client(id: headers.id, user: user, lastSeen: at)
        client.user = user
        client.lastSeen = at
        change(&client)
        clients[headers.id] = client
    }

    private static func add(_ minutes: inout [Minute], at: Int64, _ change: (inout Minute) -> Void) {
        let minute = at / 60_000
        if minutes.last?.minute != minute {
            minutes.append(Minute(minute: minute))
            if minutes.count > Self.minutes { minutes.removeFirst(minutes.count - Self.minutes) }
        }
        change(&minutes[minutes.count - 1])
    }

    /// The ``minutes`` minutes ending with `last`, each from `recorded` or `empty`.
    static func hour<Value>(ending last: Int64, _ recorded: [(Int64, Value)], empty: (Int64) -> Value) -> [Value] {
        let byMinute = Dictionary(recorded, uniquingKeysWith: { _, newer in newer })
        return (last - Int64(minutes) + 1...last).map { byMinute[$0] ?? empty($0) }
    }
}

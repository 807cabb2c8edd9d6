/// The version of the wire protocol these types describe (the `/v1/` of every path).
public enum WireProtocol {
    public static let version = 1
}

/// `POST /v1/datasets/{dataset}/push`: a batch, applied all or nothing.
public struct PushRequest: Sendable, Hashable, Codable {
    /// The registered schema version the client wrote these changes with.
    public var schemaVersion: Int
    public var changes: [WireChange]
    /// Which outcomes the answer lists: every change's (the default, `nil` on the wire), or
    /// only those of changes that lost a value or were not applied (`"lost"`).
    public var outcomes: OutcomeDetail?
    /// A resync's push (feature `snapshot`): the store's records sent again, every one, after
    /// its server's data was restored or on request. An insert in it made before the
    /// dataset's tombstone horizon, of a record the server has no state of, is taken for one
    /// of a record deleted long ago (its tombstone pruned), not made anew. `nil` (absent)
    /// otherwise.
    public var resync: Bool?

    /// Which changes' outcomes a push's answer lists.
    public enum OutcomeDetail: String, Sendable, Hashable, Codable {
        /// Every change's, in request order.
        case all
        /// Only those of changes that lost a value or were not applied, each with its
        /// ``ChangeOutcome/index``, and the answer's ``PushResponse/changeCount``. A push
        /// applied whole is answered in a few bytes, whatever its size.
        case lost
    }

    public init(schemaVersion: Int, changes: [WireChange], outcomes: OutcomeDetail? = nil, resync: Bool? = nil) {
        self.schemaVersion = schemaVersion
        self.changes = changes
        self.outcomes = outcomes
        self.resync = resync
    }
}

/// A value that lost a per-field comparison, and what won.
public struct LostValue: Sendable, Hashable, Codable {
    public var attribute: String
    public var value: WireValue
    public var stamp: String
    public var winningValue: WireValue
    public var winningStamp: String
    /// The value lost to the record's delete (`winningStamp` is the delete's), not to a
    /// newer value (which may be null too). On the wire only when `true`.
    public var toDelete: Bool

    public init(attribute: String, value: WireValue, stamp: String, winningValue: WireValue, winningStamp: String, toDelete: Bool = false) {
        self.attribute = attribute
        self.value = value
        self.stamp = stamp
        self.winningValue = winningValue
        self.winningStamp = winningStamp
        self.toDelete = toDelete
    }

    private enum CodingKeys: String, CodingKey { case attribute, value, stamp, winningValue, winningStamp, toDelete }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            attribute: try container.decode(String.self, forKey: .attribute), value: try container.decode(WireValue.self, forKey: .value),
            stamp: try container.decode(String.self, forKey: .stamp), winningValue: try container.decode(WireValue.self, forKey: .winningValue),
            winningStamp: try container.decode(String.self, forKey: .winningStamp),
            toDelete: try container.decodeIfPresent(Bool.self, forKey: .toDelete) ?? false)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(attribute, forKey: .attribute)
        try container.encode(value, forKey: .value)
        try container.encode(stamp, forKey: .stamp)
        try container.encode(winningValue, forKey: .winningValue)
        try container.encode(winningStamp, forKey: .winningStamp)
        if toDelete { try container.encode(true, forKey: .toDelete) }
    }
}

/// What became of one change of a push, in request order.
public struct ChangeOutcome: Sendable, Hashable, Codable {
    /// The change's index in the push, in an answer that lists only some outcomes
    /// (``PushRequest/OutcomeDetail/lost``); `nil` when every change's is listed in order.
    public var index: Int?
    /// The change's position in the dataset's log, when any of it was applied.
    public var position: Int64?
    /// Attributes whose value was applied (`"*"` for a delete).
    public var applied: [String]
    /// Values that lost to newer ones (or to a delete).
    public var lost: [LostValue]

    public init(index: Int? = nil, position: Int64?, applied: [String], lost: [LostValue]) {
        self.index = index
        self.position = position
        self.applied = applied
        self.lost = lost
    }
}

/// The answer to a push. A replayed `Idempotency-Key` gets the first answer again.
///
/// ```json
/// {"changes": 1000, "outcomes": [{"index": 17, "applied": ["title"], "lost": [...], "position": 52}], "serverTime": ...}
/// ```
public struct PushResponse: Sendable, Hashable, Codable {
    /// Every change's outcome in request order; or, when ``changeCount`` is set, only those
    /// of the changes that lost a value or were not applied, each with its index.
    public var outcomes: [ChangeOutcome]
    /// The number of changes pushed, in an answer that lists only some outcomes
    /// (``PushRequest/OutcomeDetail/lost``); `nil` when it lists every change's.
    public var changeCount: Int?
    /// The server's clock (milliseconds since 1970), so clients can correct theirs.
    public var serverTime: Int64
    /// Where this push's log entries lie, when they are exactly what it sent (see
    /// ``PushEcho``); absent otherwise, and from servers before it.
    public var echo: PushEcho?

    private enum CodingKeys: String, CodingKey {
        case outcomes, changeCount = "changes", serverTime, echo
    }

    public init(outcomes: [ChangeOutcome], changeCount: Int? = nil, serverTime: Int64, echo: PushEcho? = nil) {
        self.outcomes = outcomes
        self.changeCount = changeCount
        self.serverTime = serverTime
        self.echo = echo
    }

    /// The outcomes with the index of the change each belongs to, for a push of `count`
    /// changes, whichever form the answer has; `nil` when the answer does not fit such a
    /// push (another count, or an index out of range or out of order).
    ///
    /// ```swift
    /// guard let outcomes = answer.indexedOutcomes(count: batch.count) else { … }
    /// ```
    public func indexedOutcomes(count: Int) -> [(index: Int, outcome: ChangeOutcome)]? {
        guard let changeCount else {
            return outcomes.count == count ? outcomes.enumerated().map { ($0.offset, $0.element) } : nil
        }
        guard changeCount == count else { return nil }
        var indexed: [(index: Int, outcome: ChangeOutcome)] = []
        indexed.reserveCapacity(outcomes.count)
        for outcome in outcomes {
            guard let index = outcome.index, index > (indexed.last?.index ?? -1), index < count else { return nil }
            indexed.append((index, outcome))
        }
        return indexed
    }
}

/// The log entries a push appended, as pull cursors: every entry of the dataset's log after
/// `from` and through `to` is this push's, and each carries only values and stamps the push
/// sent (no restored record, no values a re-insert brought back).
///
/// A client whose cursor is `from`, and whose store still holds every value it pushed,
/// would pull nothing new from those entries: it may move its cursor to `to` instead of
/// pulling its own changes back.
///
/// ```json
/// {"echo": {"from": "c1.MTo0Mg", "to": "c1.MTo1Mg"}, "outcomes": [...], "serverTime": ...}
/// ```
public struct PushEcho: Sendable, Hashable, Codable {
    /// The cursor of the dataset's last log entry before the push.
    public var from: String
    /// The cursor of the push's last log entry (`from` when it appended none).
    public var to: String

    public init(from: String, to: String) {
        self.from = from
        self.to = to
    }
}

/// One entry of a dataset's log: what the server applied, in log order.
public struct LogEntry: Sendable, Hashable, Codable {
    public var position: Int64
    public var change: WireChange
    public var schemaVersion: Int

    public init(position: Int64, change: WireChange, schemaVersion: Int) {
        self.position = position
        self.change = change
        self.schemaVersion = schemaVersion
    }
}

/// `GET /v1/datasets/{dataset}/pull?after=CURSOR&limit=N`.
public struct PullResponse: Sendable, Hashable, Codable {
    public var changes: [LogEntry]
    /// Pass as `after` to continue; stable: the same cursor always means the same position.
    public var nextCursor: String
    public var hasMore: Bool
    public var serverTime: Int64

    public init(changes: [LogEntry], nextCursor: String, hasMore: Bool, serverTime: Int64) {
        self.changes = changes
        self.nextCursor = nextCursor
        self.hasMore = hasMore
        self.serverTime = serverTime
    }
}

/// A dataset as listed by `GET /v1/datasets`.
public struct DatasetInfo: Sendable, Hashable, Codable {
    public var name: String
    public var createdAt: Int64
    /// The latest registered schema version, 0 before the first.
    public var schemaVersion: Int
    /// Its owner's name, in `GET /v1/datasets`: a dataset shared with the caller is
    /// `OWNER/NAME` for their client (absent in other answers).
    public var owner: String?
    /// The caller's role in it, in `GET /v1/datasets` (the owner's is `admin`).
    public var role: DatasetRole?

    public init(name: String, createdAt: Int64, schemaVersion: Int, owner: String? = nil, role: DatasetRole? = nil) {
        self.name = name
        self.createdAt = createdAt
        self.schemaVersion = schemaVersion
        self.owner = owner
        self.role = role
    }
}

/// `GET /v1/datasets`.
public struct DatasetList: Sendable, Hashable, Codable {
    public var datasets: [DatasetInfo]
    public init(datasets: [DatasetInfo]) { self.datasets = datasets }
}

/// One registered schema version.
public struct SchemaVersionInfo: Sendable, Hashable, Codable {
    public var version: Int
    public var registeredAt: Int64
    /// The canonical schema JSON, as registered.
    public var schema: String

    public init(version: Int, registeredAt: Int64, schema: String) {
        self.version = version
        self.registeredAt = registeredAt
        self.schema = schema
    }
}

/// `GET /v1/datasets/{dataset}/schema`: every version, oldest first.
public struct SchemaHistory: Sendable, Hashable, Codable {
    public var versions: [SchemaVersionInfo]
    public init(versions: [SchemaVersionInfo]) { self.versions = versions }
}

/// The answer to `PUT /v1/datasets/{dataset}/schema`.
public struct SchemaRegistration: Sendable, Hashable, Codable {
    public var version: Int
    /// `false` when the schema is a registered version already (nothing registered): the
    /// same, or the same but for the enum cases a running app cannot list.
    public var created: Bool
    public init(version: Int, created: Bool) {
        self.version = version
        self.created = created
    }
}

/// Every error answer: `{"error": {"code": "…", "message": "…"}}`, plus details for some codes.
public struct WireErrorBody: Sendable, Hashable, Codable {
    public struct Detail: Sendable, Hashable, Codable {
        public var code: String
        public var message: String
        /// For `schema_incompatible`: the findings (rule, path, message, hint).
        public var findings: [Finding]?
        /// For `clock_skew`: the server's clock, milliseconds since 1970.
        public var serverTime: Int64?
        /// For `clock_skew`: how far ahead of ``serverTime`` a stamp may be (milliseconds).
        public var maxClockSkew: Int64?

        public init(code: String, message: String, findings: [Finding]? = nil, serverTime: Int64? = nil, maxClockSkew: Int64? = nil) {
            self.code = code
            self.message = message
            self.findings = findings
            self.serverTime = serverTime
            self.maxClockSkew = maxClockSkew
        }
    }

    /// A schema-compatibility finding.
    public struct Finding: Sendable, Hashable, Codable {
        public var rule: String
        public var path: String
        public var verdict: String
        public var message: String
        public var hint: String
        public init(rule: String, path: String, verdict: String, message: String, hint: String) {
            self.rule = rule
            self.path = path
            self.verdict = verdict
            self.message = message
            self.hint = hint
        }
    }

    public var error: Detail
    public init(error: Detail) { self.error = error }
}

public import Foundation
public import TandemSchema
public import TandemWire

/// A user of the server.
public struct ServerUser: Sendable, Hashable, Codable {
    public var id: Int64
    public var name: String
    public init(id: Int64, name: String) {
        self.id = id
        self.name = name
    }
}

/// What a push stored: its answer, and whether the request that produced it had the same
/// body (a replayed `Idempotency-Key` with another body is refused).
public struct StoredPush: Sendable {
    public var response: Data
    public var requestHash: String
    /// `true` when this answer was stored by an earlier request with the same key.
    public var replayed: Bool
}

/// Everything the server keeps: users, tokens, datasets, schema versions, records, the log,
/// lost values and idempotent answers. Handlers see only this protocol; `SQLiteServerStorage`
/// is the default, `MemoryServerStorage` its in-memory twin, and a PostgreSQL implementation
/// fits behind it (every method is one transaction).
public protocol ServerStorage: Sendable {
    func addUser(name: String, now: Int64) async throws -> ServerUser
    func user(named name: String) async throws -> ServerUser?
    func addToken(id: String, secretHash: String, user: Int64, now: Int64) async throws
    /// Revokes the token; `false` when there is no such live token.
    func revokeToken(id: String) async throws -> Bool
    /// The owner and secret hash of a live (not revoked) token.
    func token(id: String) async throws -> (user: ServerUser, secretHash: String)?

    /// Creates the dataset `name` of `owner` unless it exists; returns it and whether it was created.
    func createDataset(owner: Int64, name: String, now: Int64) async throws -> (DatasetInfo, created: Bool)
    func datasets(owner: Int64) async throws -> [DatasetInfo]
    /// The id of `owner`'s dataset `name`.
    func datasetID(owner: Int64, name: String) async throws -> Int64?

    func schemaHistory(dataset: Int64) async throws -> [SchemaVersionInfo]
    /// Registers `json` as the next version after `check` accepted it against every earlier
    /// version, in one transaction; `check` returns `false` when it equals the latest (nothing
    /// to register).
    func registerSchema(
        dataset: Int64, json: String, now: Int64,
        check: @Sendable ([SchemaVersionInfo]) throws -> Bool
    ) async throws -> SchemaRegistration

    /// Runs a push in one transaction: the stored answer when `key` was seen, else `apply`
    /// (all or nothing) and its answer stored under `key`. `changes` is how many changes it
    /// holds (a storage may group pushes up to a number of changes).
    func push(
        dataset: Int64, key: String, requestHash: String, now: Int64, changes: Int,
        apply: @escaping @Sendable (inout any PushTransaction) throws -> Data
    ) async throws -> StoredPush

    /// Log entries after `position`, oldest first, at most `limit`, and whether more follow.
    func pull(dataset: Int64, after position: Int64, limit: Int) async throws -> (entries: [LogEntry], hasMore: Bool)

    /// The last position of the dataset's log (0 when it is empty).
    func logHead(dataset: Int64) async throws -> Int64

    /// The same page as ``pull(dataset:after:limit:)``, as the JSON array of its entries.
    /// Storages that keep log entries as JSON splice them instead of decoding and encoding
    /// each change; the default writes the entries with ``WireJSON``.
    func pullJSON(dataset: Int64, after position: Int64, limit: Int) async throws -> PulledPage

    /// Forgets the answers of pushes stored before `cutoff` (milliseconds since 1970);
    /// returns how many. A retry that comes later is applied as a new push: its values carry
    /// the same stamps as the ones already merged, so they change nothing.
    func pruneIdempotencyKeys(before cutoff: Int64) async throws -> Int

    /// Throws when the storage cannot serve requests.
    func checkHealth() async throws
}

/// A page of the log as JSON: `[{"change":…,"position":…,"schemaVersion":…},…]`.
public struct PulledPage: Sendable {
    public var json: [UInt8]
    public var count: Int
    /// The position of the last entry, `nil` when the page is empty.
    public var lastPosition: Int64?
    public var hasMore: Bool

    public init(json: [UInt8], count: Int, lastPosition: Int64?, hasMore: Bool) {
        self.json = json
        self.count = count
        self.lastPosition = lastPosition
        self.hasMore = hasMore
    }
}

extension ServerStorage {
    public func pullJSON(dataset: Int64, after position: Int64, limit: Int) async throws -> PulledPage {
        let (entries, hasMore) = try await pull(dataset: dataset, after: position, limit: limit)
        var json = WireJSON()
        json.array(entries) { writer, entry in writer.append(entry) }
        return PulledPage(json: json.bytes, count: entries.count, lastPosition: entries.last?.position, hasMore: hasMore)
    }
}

/// A record merged into another because both held one unique value.
public struct MergedRecord: Sendable {
    public var survivor: String
    /// The stamp of the loser's delete.
    public var stamp: HLCTimestamp
    /// The loser as it was before the merge: what it comes back with when a change made
    /// before its maker learned of the merge frees the value.
    public var state: RecordState?
    /// When the loser's id was made again by an insert newer than the merge: changes stamped
    /// before it were made for the merged record and go to the survivor, later ones are the
    /// new record's.
    public var remade: HLCTimestamp?

    public init(survivor: String, stamp: HLCTimestamp, state: RecordState?, remade: HLCTimestamp? = nil) {
        self.survivor = survivor
        self.stamp = stamp
        self.state = state
        self.remade = remade
    }

    /// Whether a change stamped `stamp` to the loser goes to the survivor: unless the id was
    /// made again at or before it.
    public func takes(_ stamp: HLCTimestamp) -> Bool {
        remade.map { stamp < $0 } ?? true
    }
}

/// What a push reads and writes inside its transaction.
public protocol PushTransaction {
    func record(_ uri: String) throws -> RecordState?
    mutating func setRecord(_ uri: String, _ state: RecordState) throws
    /// Appends an applied change to the dataset's log; returns its position.
    mutating func appendLog(_ change: WireChange, schemaVersion: Int) throws -> Int64
    mutating func recordLost(_ lost: LostValue, record uri: String, position: Int64?, at now: Int64) throws
    /// The position of the dataset's last log entry (0 when the log is empty). Mutating, so
    /// a storage may remember it for the appends that follow in the same push.
    mutating func lastLogPosition() throws -> Int64
    /// ``appendLog(_:schemaVersion:)`` for a change whose wire JSON is already written:
    /// `json` is exactly `WireJSON`'s text of `change`, which a storage that keeps the text
    /// need not build.
    mutating func appendLog(_ change: @autoclosure () -> WireChange, json: ArraySlice<UInt8>, schemaVersion: Int) throws -> Int64
    /// Stores the state of a record made by one insert, when the dataset has no record at
    /// `uri`: each value with its stamp, `created` its creation stamp. Returns `false`, having
    /// written nothing, when it has one. The same as ``record(_:)`` then ``setRecord(_:_:)``
    /// with that state, which the default does; a storage may write it without looking the
    /// record up or building the state.
    mutating func insertNewRecord(
        _ uri: String, entity: String, values: [String: WireValue], stamps: [String: HLCTimestamp],
        created: HLCTimestamp
    ) throws -> Bool

    /// Claims the unique value `key` of `entity` (see ``UniqueKeys``) for record `uri`:
    /// `nil` when it is now `uri`'s (or was already), the record holding it otherwise.
    mutating func claimUnique(entity: String, key: String, record uri: String) throws -> String?
    /// Frees the unique value `key` of `entity` when record `uri` holds it.
    mutating func releaseUnique(entity: String, key: String, record uri: String) throws
    /// Remembers how record `loser` was merged into another (both held one unique value);
    /// `nil` forgets it (the loser lives again as it was).
    mutating func setMerged(_ loser: String, _ merged: MergedRecord?) throws
    /// The record `uri` was merged into, when, and the loser's state before the merge; `nil`
    /// when it was not merged.
    func mergedInto(_ uri: String) throws -> MergedRecord?
    /// Remembers that record `owner`'s link field `field` (`<relationship>#<member id>`) names
    /// record `member`, for ``linkOwners(of:)``. Kept when the link goes: the owner's state
    /// says whether it holds.
    mutating func addLinkOwner(_ owner: String, field: String, member: String) throws
    /// The records whose link fields have named record `member`, with each field, in a
    /// stable order: what a delete or a revival of `member` looks at.
    func linkOwners(of member: String) throws -> [(owner: String, field: String)]
}

extension PushTransaction {
    /// Writes `change` anew (for storages that keep changes, not their text).
    public mutating func appendLog(_ change: @autoclosure () -> WireChange, json: ArraySlice<UInt8>, schemaVersion: Int) throws -> Int64 {
        try appendLog(change(), schemaVersion: schemaVersion)
    }

    /// Looks the record up, then builds the ``RecordState`` and stores it with
    /// ``setRecord(_:_:)``.
    public mutating func insertNewRecord(
        _ uri: String, entity: String, values: [String: WireValue], stamps: [String: HLCTimestamp],
        created: HLCTimestamp
    ) throws -> Bool {
        guard try record(uri) == nil else { return false }
        try setRecord(uri, RecordState(newRecord: entity, values: values, stamps: stamps, created: created))
        return true
    }
}

public import Foundation
public import TandemSchema
public import TandemWire

/// A user of the server.
public struct ServerUser: Sendable, Hashable, Codable {
    public var id: Int64
    public var name: String
    /// The limits the operator set for this user (read with the user, so a request needs no
    /// second lookup).
    public var quota: UserQuota
    /// Whether the user runs the server: their token opens the dashboard (`/admin`), which
    /// shows every dataset (`tandem-server users add NAME --operator`).
    public var isOperator: Bool
    public init(id: Int64, name: String, quota: UserQuota = UserQuota(), isOperator: Bool = false) {
        self.id = id
        self.name = name
        self.quota = quota
        self.isOperator = isOperator
    }
}

/// What a push stored: its answer, and whether the request that produced it had the same
/// body (a replayed `Idempotency-Key` with another body is refused).
public struct StoredPush: Sendable {
    public var response: Data
    public var requestHash: String
    /// `true` when this answer was stored by an earlier request with the same key.
    public var replayed: Bool

    public init(response: Data, requestHash: String, replayed: Bool) {
        self.response = response
        self.requestHash = requestHash
        self.replayed = replayed
    }
}

/// Everything the server keeps: users, tokens, datasets, schema versions, records, the log,
/// lost values and idempotent answers. Handlers see only this protocol; `SQLiteServerStorage`
/// is the default, `MemoryServerStorage` its in-memory twin, and a PostgreSQL implementation
/// fits behind it (every method is one transaction).
public protocol ServerStorage: Sendable {
    /// The key of this server's pull cursors: random bytes made with the data and kept with
    /// it, so every server on the same data makes and reads the same cursors.
    var cursorKey: [UInt8] { get }
    /// The history the storage's logs are in (``Cursor``): a new one starts when the data is
    /// restored from a backup or copied, so cursors of the history before are refused.
    var epoch: UInt64 { get }
    /// Where pulls wait for new log entries (`pull?wait=`): the push route wakes it after each
    /// push this node commits; a storage shared by several nodes also wakes it when another
    /// node's push commits (PostgreSQL: `LISTEN`/`NOTIFY`).
    var logSignals: LogSignals { get }
    /// Starts a new epoch and returns it: every client's next pull is refused with
    /// `cursor_epoch` and the client resyncs from the start (after a restore the storage
    /// cannot see, such as a PostgreSQL point-in-time recovery on its own timeline).
    func startNewEpoch() async throws -> UInt64

    /// Adds a user; `subject`: the `sub` of the app's sign-in bound to them (a JWT of that
    /// subject is this user, whatever its name claim says later). Refused
    /// (``StorageError/conflict(_:)``) when the name, in any letter case, or the subject is
    /// taken.
    func addUser(name: String, now: Int64, subject: String?) async throws -> ServerUser
    /// The user a JWT subject is bound to.
    func user(subject: String) async throws -> ServerUser?
    func user(named name: String) async throws -> ServerUser?
    /// Every user, by name, with what they own and hold.
    /// (Live tokens: neither revoked nor expired at `now`.)
    func users(now: Int64) async throws -> [UserSummary]
    /// Removes the user with their tokens and memberships: refused
    /// (``StorageError/conflict(_:)``) while they own datasets (delete those first), and
    /// ``StorageError/notFound(_:)`` when there is no such user.
    func removeUser(id: Int64) async throws
    /// Stores a token of `user` limited to `scope`.
    func addToken(id: String, secretHash: String, user: Int64, scope: TokenScope, now: Int64) async throws
    /// Revokes the token; `false` when there is no such live token.
    func revokeToken(id: String) async throws -> Bool
    /// The user, secret hash and scope of a live (not revoked) token, expired or not (the
    /// caller compares the expiry with its clock).
    func token(id: String) async throws -> StoredToken?
    /// The tokens of `user` (every user's when `nil`), revoked ones included, by user and
    /// creation time.
    func tokens(user: Int64?) async throws -> [TokenInfo]
    /// Sets the user's own limits (`nil` limits: the server's defaults).
    /// Makes the user an operator (or not): see ``ServerUser/isOperator``.
    func setOperator(user: Int64, _ isOperator: Bool) async throws
    func setQuota(user: Int64, _ quota: UserQuota) async throws
    /// The bytes the user's datasets hold: log entries, lost values and schema versions
    /// (what ``UserQuota/bytes`` limits).
    func storedBytes(owner: Int64) async throws -> Int64

    /// Creates `owner`'s dataset `name` (or answers the one that exists), unless `owner` has
    /// `limit` datasets already (``StorageError/quota(_:)``), checked in the same transaction.
    func createDataset(owner: Int64, name: String, now: Int64, limit: Int) async throws -> (DatasetInfo, created: Bool)
    func datasets(owner: Int64) async throws -> [DatasetInfo]
    /// The id of `owner`'s dataset `name`.
    func datasetID(owner: Int64, name: String) async throws -> Int64?
    /// Every dataset with its owner and sizes, by owner and name (the operator's dashboard).
    func datasetOverviews() async throws -> [DatasetOverview]
    /// The datasets `user` owns or is a member of, with their owner and the user's role, by
    /// owner and name.
    func datasets(reachableBy user: Int64) async throws -> [ReachableDataset]
    /// Deletes the dataset at once (its name, members and schema versions; a new dataset of
    /// its name starts empty, with another id) and leaves its records and log to
    /// ``purgeDeletedDatasets(limit:)``; `false` when there is no such dataset.
    func deleteDataset(id: Int64) async throws -> Bool
    /// Deletes at most about `limit` rows of deleted datasets' data, in one short
    /// transaction; returns how many (0: nothing is left).
    func purgeDeletedDatasets(limit: Int) async throws -> Int
    /// The ids `owner`'s deleted datasets named `name` had (a stale cursor of one of them
    /// is answered `cursor_dataset_deleted`, and its client resyncs).
    func deletedDatasetIDs(owner: Int64, name: String) async throws -> [Int64]

    /// Makes `user` a member of `dataset` with `role`, or changes their role.
    func setMember(dataset: Int64, user: Int64, role: DatasetRole, now: Int64) async throws
    /// Removes `user` from `dataset`'s members; `false` when they were none.
    func removeMember(dataset: Int64, user: Int64) async throws -> Bool
    /// `dataset`'s members (the owner is not one), by user name.
    func members(dataset: Int64) async throws -> [DatasetMember]
    /// `user`'s role in `dataset`, if they are a member (read on every request: a removal
    /// takes effect at once, on every node).
    func role(dataset: Int64, user: Int64) async throws -> DatasetRole?

    func schemaHistory(dataset: Int64) async throws -> [SchemaVersionInfo]
    /// Registers `json` as version `versions + 1` when the dataset has exactly `versions`
    /// versions (the history the caller checked it against, outside any transaction), in one
    /// short transaction; `nil` when another registration came first (check again against the
    /// new history).
    func registerSchema(dataset: Int64, json: String, now: Int64, after versions: Int) async throws -> SchemaRegistration?

    /// Runs a push in one transaction: the stored answer when `key` was seen, else `job`
    /// (all or nothing, ``PushWorkspace/perform(_:on:)`` on the storage's ``PushStore``) and
    /// its answer stored under `key`; the bytes it logs count in the owner's
    /// ``storedBytes(owner:)``. `changes` is how many changes it holds (a storage may
    /// group pushes up to a number of changes).
    func push(dataset: Int64, key: String, requestHash: String, now: Int64, changes: Int, job: PushJob) async throws -> StoredPush

    /// Log entries after `position`, oldest first, at most `limit`, and whether more follow.
    func pull(dataset: Int64, after position: Int64, limit: Int) async throws -> (entries: [LogEntry], hasMore: Bool)

    /// The last position of the dataset's log (0 when it is empty).
    func logHead(dataset: Int64) async throws -> Int64

    /// The same page as ``pull(dataset:after:limit:)``, as the JSON array of its entries,
    /// ended early once the entries reach `maxBytes` (the first entry goes out whatever its
    /// size). Storages that keep log entries as JSON splice them instead of decoding and
    /// encoding each change; the default writes the entries with ``WireJSON``.
    func pullJSON(dataset: Int64, after position: Int64, limit: Int, maxBytes: Int) async throws -> PulledPage

    /// The dataset's records after `uri` (`""`: from the first) in the byte order of their
    /// URIs, at most `limit`, ended early once their stored states reach `maxBytes` (the
    /// first goes in whatever its size), and whether more follow: a page of a snapshot
    /// (``SnapshotToken``). Deleted records are among them while their tombstones are kept.
    func records(dataset: Int64, after uri: String, limit: Int, maxBytes: Int) async throws -> (records: [StoredRecord], hasMore: Bool)

    /// Where compaction left the dataset's log and records (``CompactionState``).
    func compaction(dataset: Int64) async throws -> CompactionState
    /// The compaction state of every dataset, by id.
    func compactionStates() async throws -> [CompactionState]
    /// Notes that `dataset`'s log ended at `position` at `at` (ms): the marks tell how old
    /// entries are, off the push path (``ServerStorage/compact(policy:now:maxClockSkew:)``).
    func addLogMark(dataset: Int64, position: Int64, at: Int64) async throws
    /// The newest mark of `dataset` made at or before `at`, and the newest at or before
    /// position `position`; `nil` when there is none.
    func logMark(dataset: Int64, notAfter at: Int64?, notPast position: Int64?) async throws -> LogMark?
    /// Deletes at most `limit` log entries of `dataset` after its compaction point and at or
    /// before `through`, in one short transaction; moves the compaction point to the last one
    /// deleted, takes their bytes out of the owner's quota and forgets the marks before it.
    /// Returns how many were deleted.
    func compactLog(dataset: Int64, through: Int64, limit: Int) async throws -> Int
    /// Reads at most `limit` records of `dataset` after `uri` and deletes those that are
    /// tombstones of deletes stamped before `before` (ms), in one short transaction, having
    /// noted `before` as the dataset's ``CompactionState/tombstonesBefore``. Returns the last
    /// URI read (`nil`: none was left) and how many were deleted.
    func pruneTombstones(dataset: Int64, before: Int64, after uri: String, limit: Int) async throws -> (last: String?, pruned: Int)

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
    /// The position of the first entry, `nil` when the page is empty (past the cursor's
    /// next: the entries between were compacted).
    public var firstPosition: Int64?
    /// The position of the last entry, `nil` when the page is empty.
    public var lastPosition: Int64?
    public var hasMore: Bool

    public init(json: [UInt8], count: Int, firstPosition: Int64? = nil, lastPosition: Int64?, hasMore: Bool) {
        self.json = json
        self.count = count
        self.firstPosition = firstPosition
        self.lastPosition = lastPosition
        self.hasMore = hasMore
    }
}

extension ServerStorage {
    /// Purges everything deleted datasets left, in steps of ``MaintenanceService/purgeStep``
    /// rows, one short transaction each (other requests take turns between them).
    public func purgeDeletedDatasets() async throws {
        while try await purgeDeletedDatasets(limit: MaintenanceService.purgeStep) > 0 { await Task.yield() }
    }

    /// Adds a user no JWT is bound to (they sign in with API tokens).
    public func addUser(name: String, now: Int64) async throws -> ServerUser {
        try await addUser(name: name, now: now, subject: nil)
    }

    /// What `dataset`'s cursors carry in the storage's epoch.
    public func cursorScope(of dataset: Int64) -> Cursor.Scope {
        Cursor.Scope(dataset: dataset, key: cursorKey, epoch: epoch)
    }

    public func pullJSON(dataset: Int64, after position: Int64, limit: Int, maxBytes: Int) async throws -> PulledPage {
        let (entries, hasMore) = try await pull(dataset: dataset, after: position, limit: limit)
        var page = PageWriter(limit: limit, maxBytes: maxBytes)
        for entry in entries where page.hasRoom {
            page.add(position: entry.position) { $0.append(entry) }
        }
        return page.finish(hasMore: hasMore || page.count < entries.count)
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

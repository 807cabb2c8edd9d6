/// A storage's side of one push transaction: batch reads before the push's logic runs, then
/// its writes in one batch. ``PushWorkspace/perform(_:on:)`` drives it; a push costs one
/// ``read(_:)`` and one ``write(_:)``, and another round only when the push needs what it
/// could not name beforehand (the record holding a unique value it collides with, say).
///
/// SQLite answers a batch with point lookups on one prepared statement each (in-process,
/// nothing to gain from larger queries); a networked database answers each kind of key with
/// one query (`= ANY($1)`), so a push costs a few round trips, not one per change.
///
/// ```swift
/// var store = SQLitePushStore(db: db, dataset: id)
/// let answer = try PushWorkspace.perform(job, on: &store)
/// ```
public protocol PushStore {
    /// The position of the dataset's last log entry (0 when the log is empty).
    mutating func lastLogPosition() throws -> Int64
    /// The dataset's ``CompactionState/tombstonesBefore`` (0: no tombstone was pruned).
    mutating func tombstonesBefore() throws -> Int64
    /// What `keys` name, as stored.
    mutating func read(_ keys: PushKeys) throws -> PushReads
    /// Writes `writes`, all or nothing: when a new record exists or a claimed unique value is
    /// held by another record, writes nothing and returns the keys to read (records and unique
    /// values); an empty ``PushKeys`` when everything was written.
    mutating func write(_ writes: PushWrites) throws -> PushKeys
}

/// ``PushStore`` for a storage behind a network, inside the push's transaction, which already
/// holds the dataset's log head (read as it locked the dataset): each ``read(_:)`` and
/// ``write(_:)`` is a few queries, one per kind of key. ``PushWorkspace/perform(_:onAsync:)``
/// drives it.
///
/// ```swift
/// var store = PostgresPushStore(connection: connection, dataset: id, lastPosition: head)
/// let answer = try await PushWorkspace.perform(job, onAsync: &store)
/// ```
public protocol AsyncPushStore {
    /// The position of the dataset's last log entry when the push began (0: empty log).
    var lastLogPosition: Int64 { get }
    /// The dataset's ``CompactionState/tombstonesBefore`` when the push began.
    var tombstonesBefore: Int64 { get }
    /// What `keys` name, as stored.
    mutating func read(_ keys: PushKeys) async throws -> PushReads
    /// Writes `writes`, all or nothing, as ``PushStore/write(_:)`` does.
    mutating func write(_ writes: PushWrites) async throws -> PushKeys
}

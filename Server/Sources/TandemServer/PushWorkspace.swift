import Foundation
public import TandemSchema
public import TandemWire

/// What one push reads and writes, in memory: the records, merges, link owners and unique
/// values its storage read for it (``PushKeys``, ``PushReads``), and every write it makes,
/// handed to the storage at the end (``writes()``). The push's logic (``PushRun``) runs on it
/// without touching the storage, so a storage behind a network answers a push in a few
/// batches (``PushStore``).
///
/// A read of something the storage was not asked for is a *miss*: it answers as if absent,
/// and the push runs again with it read (``perform(_:on:)``; ``misses``). A record made by an
/// insert is not read first: it is written as new, and the storage refuses the write when it
/// has the record; a unique value is claimed unread the same way.
///
/// ```swift
/// var workspace = PushWorkspace(lastPosition: 41)
/// _ = workspace.appendLog(change, schemaVersion: 1)   // 42
/// let writes = workspace.writes()
/// ```
public struct PushWorkspace {
    private struct RecordSlot {
        /// The record's state (`nil`, with no `bytes`: there is no such record).
        var state: RecordState?
        /// A record made by an insert, in its binary form: decoded if the push reads it.
        var bytes: [UInt8]?
        var written = false
        /// Written by an insert without reading the record: the storage must not have it.
        var presumedNew = false
    }

    private var records: [String: RecordSlot] = [:]
    /// Records in the order first written.
    private var writtenRecords: [String] = []
    private var merged: [String: MergedRecord?] = [:]
    private var writtenMerges: [String] = []
    private var owners: [String: [LinkOwner]] = [:]
    private var unique: [UniqueSlot: String?] = [:]
    private var written = PushWrites()
    private var last: Int64
    /// How many records the push may write.
    private let capacity: Int
    /// What the push read that the storage was not asked for: answered as absent, so the
    /// push must run again with them read.
    public private(set) var misses = PushKeys()
    /// Tombstones of deletes stamped before this time (ms) may be pruned (compaction): a
    /// record with no state may be one deleted long ago.
    public private(set) var tombstonesBefore: Int64 = 0

    /// A workspace over the dataset's log ending at `lastPosition`, holding `reads`, the answer
    /// for `keys` (a key with no entry there is absent; records it holds beyond `keys` are
    /// known too).
    /// `capacity` is how many records it may write (a push's change count): room is made for
    /// them at once.
    public init(lastPosition: Int64, keys: PushKeys = PushKeys(), reads: PushReads = PushReads(), capacity: Int = 0) {
        last = lastPosition
        self.capacity = capacity
        records.reserveCapacity(keys.records.count + capacity)
        writtenRecords.reserveCapacity(capacity)
        for uri in keys.records { records[uri] = RecordSlot(state: reads.records[uri]) }
        for (uri, state) in reads.records where records[uri] == nil { records[uri] = RecordSlot(state: state) }
        for uri in keys.merged { merged[uri] = .some(reads.merged[uri]) }
        for member in keys.linkOwners { owners[member] = reads.linkOwners[member] ?? [] }
        for slot in keys.unique { unique[slot] = .some(reads.unique[slot]) }
        tombstonesBefore = reads.tombstonesBefore
    }

    // MARK: Records

    /// The record at `uri`, `nil` when there is none (or it is a miss).
    ///
    /// - Throws: ``StorageError/unavailable(_:)`` when a new record's binary form cannot be
    ///   read back (a bug).
    public mutating func record(_ uri: String) throws -> RecordState? {
        guard let slot = records[uri] else {
            misses.records.insert(uri)
            return nil
        }
        if let state = slot.state { return state }
        guard let bytes = slot.bytes else { return nil }
        let state = try RecordState(stored: Data(bytes))
        records[uri]?.state = state
        records[uri]?.bytes = nil
        return state
    }

    /// Stores `state` as record `uri`'s.
    public mutating func setRecord(_ uri: String, _ state: RecordState) {
        var slot = records[uri] ?? RecordSlot()
        slot.state = state
        slot.bytes = nil
        markWritten(uri, &slot)
        records[uri] = slot
    }

    /// Stores the state of a record made by one insert, when the dataset has no record at
    /// `uri`: each value with its stamp, `created` its creation stamp, in its binary form
    /// (built without the ``RecordState``). Returns `false`, having written nothing, when it
    /// has one. A record not read is presumed new (the storage checks it as it writes).
    public mutating func insertNewRecord(
        _ uri: String, entity: String, values: [String: WireValue], stamps: [String: HLCTimestamp],
        created: HLCTimestamp
    ) -> Bool {
        let bytes = RecordState.binaryBytes(newRecord: entity, values: values, stamps: stamps, created: created)
        // One lookup for the usual new record: stored first, put back if it was there.
        guard let known = records.updateValue(RecordSlot(bytes: bytes, written: true, presumedNew: true), forKey: uri) else {
            writtenRecords.append(uri)
            return true
        }
        var slot = known
        guard known.state == nil && known.bytes == nil else {
            records[uri] = known
            return false
        }
        slot.bytes = bytes
        markWritten(uri, &slot)
        records[uri] = slot
        return true
    }

    private mutating func markWritten(_ uri: String, _ slot: inout RecordSlot) {
        guard !slot.written else { return }
        slot.written = true
        writtenRecords.append(uri)
    }

    // MARK: The log and the conflict log

    /// The position of the dataset's last log entry, this push's included.
    public func lastLogPosition() -> Int64 { last }

    /// Appends an applied change to the dataset's log; returns its position.
    public mutating func appendLog(_ change: WireChange, schemaVersion: Int) -> Int64 {
        var json = WireJSON()
        json.append(change)
        return appendLog(json: json.bytes[...], schemaVersion: schemaVersion)
    }

    /// ``appendLog(_:schemaVersion:)`` for a change whose wire JSON is already written:
    /// `json` is exactly ``WireJSON``'s text of it (a slice of the push's own text).
    public mutating func appendLog(json: ArraySlice<UInt8>, schemaVersion: Int) -> Int64 {
        last += 1
        written.log.append(LogWrite(position: last, schemaVersion: schemaVersion, json: json))
        return last
    }

    /// Records a value that lost, for the conflict log.
    public mutating func recordLost(_ lost: LostValue, record uri: String, position: Int64?, at now: Int64) {
        written.lost.append(LostWrite(lost: lost, record: uri, position: position, at: now))
    }

    // MARK: Unique values

    /// Claims unique value `key` of `entity` (see ``UniqueKeys``) for record `uri`: `nil`
    /// when it is now `uri`'s (or was already), the record holding it otherwise. A value not
    /// read is presumed free (the storage checks it as it writes).
    public mutating func claimUnique(entity: String, key: String, record uri: String) -> String? {
        let slot = UniqueSlot(entity: entity, key: key)
        if unique.isEmpty { unique.reserveCapacity(capacity) }
        // One lookup for the usual value not read: claimed first, put back if it was held.
        if let known = unique.updateValue(.some(uri), forKey: slot), let holder = known {
            if holder == uri { return nil }
            unique[slot] = known
            return holder
        }
        written.unique.append(UniqueWrite(slot: slot, record: uri, claim: true))
        return nil
    }

    /// Frees unique value `key` of `entity` when record `uri` holds it.
    public mutating func releaseUnique(entity: String, key: String, record uri: String) {
        let slot = UniqueSlot(entity: entity, key: key)
        if let known = unique[slot] {
            guard known == uri else { return }
            unique[slot] = .some(nil)
        }
        // Not read: the storage frees it if `uri` holds it.
        written.unique.append(UniqueWrite(slot: slot, record: uri, claim: false))
    }

    // MARK: Merged records

    /// Remembers how record `loser` was merged into another (both held one unique value);
    /// `nil` forgets it (the loser lives again as it was).
    public mutating func setMerged(_ loser: String, _ record: MergedRecord?) {
        if !writtenMerges.contains(loser) { writtenMerges.append(loser) }
        merged[loser] = .some(record)
    }

    /// The record `uri` was merged into, when, and the loser's state before the merge; `nil`
    /// when it was not merged (or it is a miss).
    public mutating func mergedInto(_ uri: String) -> MergedRecord? {
        guard let known = merged[uri] else {
            misses.merged.insert(uri)
            return nil
        }
        return known
    }

    // MARK: Link owners

    /// Remembers that record `owner`'s link field `field` (`<relationship>#<member id>`)
    /// names record `member`, for ``linkOwners(of:)``. Kept when the link goes: the owner's
    /// state says whether it holds.
    public mutating func addLinkOwner(_ owner: String, field: String, member: String) {
        let link = LinkOwner(owner: owner, field: field)
        if var known = owners[member] {
            guard !known.contains(link) else { return }
            known.insert(link, at: known.firstIndex(where: { link < $0 }) ?? known.endIndex)
            owners[member] = known
        }
        written.linkOwners.append((member, link))
    }

    /// The records whose link fields have named record `member`, with each field, by owner
    /// then field: what a delete or a revival of `member` looks at.
    public mutating func linkOwners(of member: String) -> [(owner: String, field: String)] {
        guard let known = owners[member] else {
            misses.linkOwners.insert(member)
            return []
        }
        return known.map { ($0.owner, $0.field) }
    }

    // MARK: The writes

    /// Everything the push wrote, for ``PushStore/write(_:)``.
    public func writes() -> PushWrites {
        var writes = written
        writes.records = writtenRecords.map { uri in
            let slot = records[uri]!
            return RecordWrite(uri: uri, state: slot.bytes ?? slot.state!.binaryBytes(), isNew: slot.presumedNew)
        }
        writes.merged = writtenMerges.map { ($0, merged[$0]!) }
        return writes
    }
}

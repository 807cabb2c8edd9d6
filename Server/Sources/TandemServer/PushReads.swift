/// What a storage answered for ``PushKeys``: a key it has no entry for is absent (no such
/// record, never merged, no link owners, value free). A storage may answer more records than
/// it was asked for: the records of the link owners it read (one join on a networked
/// database), which a delete of their member reads next.
///
/// ```swift
/// let reads = try store.read(keys)
/// let state = reads.records["tandem://todos/Item/1"]   // nil: no such record
/// ```
public struct PushReads: Sendable {
    public var records: [String: RecordState] = [:]
    public var merged: [String: MergedRecord] = [:]
    /// Each member's owners and link fields, in the order of ``PushWorkspace/linkOwners(of:)``
    /// (by owner, then field).
    public var linkOwners: [String: [LinkOwner]] = [:]
    /// The record holding each unique value.
    public var unique: [UniqueSlot: String] = [:]
    /// The dataset's ``CompactionState/tombstonesBefore``, read with the records.
    public var tombstonesBefore: Int64 = 0

    public init() {}
}

/// A record whose link field (`<relationship>#<member id>`) names a member.
public struct LinkOwner: Sendable, Hashable, Comparable {
    public var owner: String
    public var field: String

    public init(owner: String, field: String) {
        self.owner = owner
        self.field = field
    }

    public static func < (a: LinkOwner, b: LinkOwner) -> Bool { (a.owner, a.field) < (b.owner, b.field) }
}

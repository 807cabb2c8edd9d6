/// What a push reads from its storage, named before it runs so the storage can answer in one
/// batch (``PushStore/read(_:)``): records, merges and link owners by record URI, and unique
/// values by ``UniqueSlot``.
///
/// ```swift
/// var keys = PushKeys()
/// keys.records.insert("tandem://todos/Item/1")
/// let reads = try store.read(keys)
/// ```
public struct PushKeys: Sendable, Equatable {
    /// Records whose state the push reads.
    public var records: Set<String> = []
    /// Records the push asks whether they were merged into another.
    public var merged: Set<String> = []
    /// Members whose link owners the push lists.
    public var linkOwners: Set<String> = []
    /// Unique values whose holder the push reads.
    public var unique: Set<UniqueSlot> = []

    public init() {}

    /// Whether it names nothing.
    public var isEmpty: Bool { records.isEmpty && merged.isEmpty && linkOwners.isEmpty && unique.isEmpty }

    /// Adds the keys `other` names.
    public mutating func formUnion(_ other: PushKeys) {
        records.formUnion(other.records)
        merged.formUnion(other.merged)
        linkOwners.formUnion(other.linkOwners)
        unique.formUnion(other.unique)
    }
}

/// One unique value of an entity: the key ``UniqueMerge`` makes of a record's values
/// (`<attribute>=<JSON of each column's value>`).
public struct UniqueSlot: Sendable, Hashable {
    public var entity: String
    public var key: String

    public init(entity: String, key: String) {
        self.entity = entity
        self.key = key
    }

    /// Hashes the key alone (`==` compares the entity too): entities rarely share a key, and a
    /// push claims one slot per new record.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(key)
    }
}

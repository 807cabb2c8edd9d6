public import TandemWire

/// Everything one push writes, gathered while it runs and handed to its storage in one batch
/// (``PushStore/write(_:)``).
///
/// Two kinds of write rest on what the push did not read, and the storage checks them as it
/// writes: a record made by an insert (``RecordWrite/isNew``) must not exist, and a unique
/// value claimed (``UniqueWrite/claim``) must be free. When one fails the storage writes
/// nothing and names it; the push runs again with it read (``PushWorkspace/perform(_:on:)``).
public struct PushWrites: Sendable {
    /// Each record's state after the push (one write per record, in the order first written).
    public var records: [RecordWrite] = []
    /// Log entries, positions following the dataset's last one.
    public var log: [LogWrite] = []
    public var lost: [LostWrite] = []
    /// Claims and releases of unique values, in order.
    public var unique: [UniqueWrite] = []
    /// Merged-away records (`nil`: no longer merged), one per record.
    public var merged: [(uri: String, merged: MergedRecord?)] = []
    /// Link owners to remember (``PushWorkspace/addLinkOwner(_:field:member:)``).
    public var linkOwners: [(member: String, owner: LinkOwner)] = []

    public init() {}

    /// Whether it writes nothing.
    public var isEmpty: Bool {
        records.isEmpty && log.isEmpty && lost.isEmpty && unique.isEmpty && merged.isEmpty && linkOwners.isEmpty
    }
}

/// A record's state as a push leaves it, in its binary form.
public struct RecordWrite: Sendable {
    public var uri: String
    /// ``RecordState``'s binary form (`RecordState+Binary.swift`).
    public var state: [UInt8]
    /// Made by an insert without reading the record: the storage must not have it.
    public var isNew: Bool
}

/// A log entry: `json` is ``WireJSON``'s text of the change.
public struct LogWrite: Sendable {
    public var position: Int64
    public var schemaVersion: Int
    public var json: ArraySlice<UInt8>
}

/// A value that lost, for the conflict log.
public struct LostWrite: Sendable {
    public var lost: LostValue
    public var record: String
    /// The log entry of the change that lost it, `nil` when nothing of it was applied.
    public var position: Int64?
    public var at: Int64
}

/// A unique value claimed for a record (it must be free or the record's already) or released
/// by it (freed when the record holds it).
public struct UniqueWrite: Sendable {
    public var slot: UniqueSlot
    public var record: String
    public var claim: Bool
}

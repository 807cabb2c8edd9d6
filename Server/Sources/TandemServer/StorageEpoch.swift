/// The epoch of a storage's data (see ``Cursor``) and the identity of the place it was found
/// in when the epoch was settled.
///
/// Storages cannot see a restore happen; they see its result: the data lives somewhere else
/// than it did (a SQLite file with another inode, a PostgreSQL database with another OID,
/// cluster or timeline). Data found somewhere new starts a new epoch. A move that is not a
/// restore (the data directory copied to a new disk) starts one too: its clients resync once,
/// which costs a full pull but loses nothing, where keeping the epoch across a real restore
/// would let them skip changes.
///
/// ```swift
/// let (epoch, reason) = StorageEpoch.settle(stored: stored, identity: "sqlite:2049:1234")
/// if let reason { logger.notice("a new epoch starts: \(reason)") }
/// ```
public struct StorageEpoch: Sendable, Equatable {
    /// The epoch cursors carry.
    public var value: UInt64
    /// Where the data was when the epoch was settled (storage-specific text).
    public var identity: String

    public init(value: UInt64, identity: String) {
        self.value = value
        self.identity = identity
    }

    /// The epoch for data found at `identity`: the stored one when it was settled there,
    /// else a new one with the reason (`nil` reason: nothing to store).
    ///
    /// - Returns: the epoch and why it is new, or the stored epoch and `nil`.
    public static func settle(stored: StorageEpoch?, identity: String, newEpoch: () -> UInt64 = Cursor.newEpoch) -> (StorageEpoch, reason: String?) {
        guard let stored else {
            return (StorageEpoch(value: newEpoch(), identity: identity), "new data")
        }
        if stored.identity == identity { return (stored, nil) }
        return (
            StorageEpoch(value: newEpoch(), identity: identity),
            "the data was made at \(stored.identity) and is now at \(identity): restored from a backup or copied, so clients resync from the start"
        )
    }

    /// The epoch as stored (8 bytes, big-endian).
    public var bytes: [UInt8] {
        stride(from: 56, through: 0, by: -8).map { UInt8(truncatingIfNeeded: value >> UInt64($0)) }
    }

    /// Reads an epoch as stored; `nil` when `bytes` are not one.
    public init?(bytes: [UInt8], identity: String) {
        guard bytes.count == 8 else { return nil }
        value = bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        self.identity = identity
    }
}

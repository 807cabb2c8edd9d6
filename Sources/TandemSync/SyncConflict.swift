/// One value that lost a conflict, as the conflict log keeps it.
///
/// ```swift
/// for conflict in try engine.conflicts() {
///     print(conflict.record, conflict.attribute, conflict.winner, conflict.rule)
/// }
/// ```
public struct SyncConflict: Sendable, Hashable, Codable {
    /// Who won.
    public enum Winner: String, Sendable, Hashable, Codable {
        /// This store's value (a pulled value lost to a newer local edit).
        case local
        /// The pulled value (a local value was overwritten).
        case remote
        /// The server's value (a pushed local value lost there).
        case server
    }

    /// Milliseconds since 1970 when the conflict was recorded.
    public var at: Int64
    /// The record URI.
    public var record: String
    /// The column (`*` for the record's existence: a delete against an edit).
    public var attribute: String
    /// The local value as wire JSON (`null` for a deleted record).
    public var localValue: String?
    public var localStamp: String?
    public var remoteValue: String?
    public var remoteStamp: String?
    public var winner: Winner
    /// The rule that decided: `lastWriterWins`, `deleteWins`, `insertAfterDelete`,
    /// `uniqueMerge`, `parentDeleted`, `superseded`, `dropped`.
    public var rule: String
    /// For `uniqueMerge`: the record that `record` was merged into (its values are in
    /// ``localValue`` or ``remoteValue``, whichever side it came from).
    public var survivor: String?

    public init(
        at: Int64, record: String, attribute: String, localValue: String?, localStamp: String?, remoteValue: String?,
        remoteStamp: String?, winner: Winner, rule: String, survivor: String? = nil
    ) {
        self.at = at
        self.record = record
        self.attribute = attribute
        self.localValue = localValue
        self.localStamp = localStamp
        self.remoteValue = remoteValue
        self.remoteStamp = remoteStamp
        self.winner = winner
        self.rule = rule
        self.survivor = survivor
    }
}

/// A change waiting in the quarantine, with why: a pulled one that could not be applied, or
/// a local one the server refused.
public struct QuarantinedChange: Sendable, Hashable, Codable {
    /// Names the change for ``SyncEngine/dropQuarantined(_:)`` and `tandem quarantine drop`.
    public var id: Int64
    public var at: Int64
    /// The change's position in the server's log; `nil` for a local change the server
    /// refused (it counts as pending, and is sent again on every sync).
    public var position: Int64?
    /// Whether this is a local change the server refused (else a pulled one not applied).
    public var isLocal: Bool { position == nil }
    /// The change as wire JSON.
    public var change: String
    public var reason: String
}

/// What one ``SyncEngine/sync()`` did.
public struct SyncSummary: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Local changes the server accepted (coalesced per record).
    public var pushed = 0
    /// Server changes applied to the store.
    public var pulled = 0
    /// Values that lost a conflict (local ones at the server, or local ones to pulled ones).
    public var conflicts = 0
    /// Pulled changes that could not be applied, kept with their reason.
    public var quarantined = 0
    /// The schema version the store syncs as.
    public var schemaVersion = 0

    public init() {}

    public var description: String {
        "pushed \(pushed), pulled \(pulled), conflicts \(conflicts), quarantined \(quarantined)"
    }
}

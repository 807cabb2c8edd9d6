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
    /// Local changes the server refused, waiting in the quarantine after this sync: they
    /// are not on the server (sent again on every sync; see ``SyncEngine/retryQuarantined()``).
    public var waitingLocal = 0
    /// Pulled changes waiting in the quarantine after this sync (applied again after every pull).
    public var waitingPulled = 0
    /// Pulled values this store's schema cannot show (entities, attributes, relationships or
    /// enum cases of a newer app version), kept aside value by value with their stamps, never
    /// shown to the app: expected on a store whose app has not updated yet, so the sync is
    /// complete without them. The first sync after the store migrates to a schema that has
    /// them applies them, without pulling them again.
    public var keptForNewerSchema = 0
    /// The server's clock minus this machine's (ms), from the sync's last answer.
    public var clockOffset: Int64?
    /// Whether this sync resynced: pushed every record again and pulled from the start
    /// (why: ``resyncReason``).
    public var resynced = false
    /// Why this sync resynced (`nil` when it did not).
    public var resyncReason: ResyncReason?

    /// Why a sync resynced.
    public enum ResyncReason: String, Sendable, Hashable, Codable {
        /// ``SyncEngine/resync()`` (`tandem resync`).
        case requested
        /// The server's data was restored from a backup or copied since the last sync
        /// (`cursor_epoch`, `cursor_ahead`).
        case serverDataRestored
        /// The dataset was deleted and made again since the last sync (`cursor_dataset_deleted`).
        case datasetMadeAgain
    }
    /// Whether the server refused this resync's push of the store's records for the user's
    /// role in the dataset (a reader) or a read-only token: the resync pulled only. For a
    /// reader that is all there is to do; a writer who meant to put the store's records
    /// back resyncs again with a token that may push.
    public var resyncPushRefused = false

    /// Whether every local change is on the server and every pulled one in the store (none
    /// waits in the quarantine): a sync that returns without this pushed and pulled what it
    /// could, but did not finish.
    public var isComplete: Bool { waitingLocal == 0 && waitingPulled == 0 }

    public init() {}

    private var resyncReasonText: String {
        switch resyncReason {
        case .requested: "on request"
        case .datasetMadeAgain: "the dataset was deleted and made again"
        case .serverDataRestored, nil: "the server's data was restored or copied"
        }
    }

    public var description: String {
        "pushed \(pushed), pulled \(pulled), conflicts \(conflicts), quarantined \(quarantined)"
            + (resynced ? ", resynced from the start (\(resyncReasonText))" : "")
            + (resyncPushRefused ? " by pulling only (this user's role or token may not push the store's records)" : "")
            + (waitingLocal > 0 ? ", \(waitingLocal) local changes refused by the server waiting" : "")
            + (waitingPulled > 0 ? ", \(waitingPulled) pulled changes not applied waiting" : "")
            + (keptForNewerSchema > 0 ? ", \(keptForNewerSchema) values of a newer schema kept for it" : "")
    }
}

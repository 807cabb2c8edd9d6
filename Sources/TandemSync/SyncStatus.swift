public import Tandem
import GRDB

/// Where a store stands with sync, read from the store alone.
///
/// ```swift
/// let status = try SyncStatus(of: container)
/// print(status.pendingChanges, status.cursor ?? "never pulled")
/// ```
public struct SyncStatus: Sendable, Hashable, Codable {
    /// Local changes not on the server yet: the journal's not pushed, and those the server
    /// refused, waiting in the quarantine (``waitingLocal``).
    public var pendingChanges: Int
    /// Local changes the server refused, waiting in the quarantine (part of ``pendingChanges``).
    public var waitingLocal: Int
    /// The server's clock minus this machine's (ms) when the store last heard from it;
    /// positive: this machine's clock is behind. Stamps use the server's time either way.
    public var clockOffset: Int64?
    /// Milliseconds since 1970 of the last successful sync.
    public var lastSync: Int64?
    /// The server's pull cursor.
    public var cursor: String?
    public var conflicts: Int
    public var quarantined: Int
    /// Values of a newer schema this store keeps aside (not shown to the app, applied once it
    /// migrates to a schema that has them; not an error).
    public var keptForNewerSchema: Int

    /// - Throws: ``SyncError`` with code `store` when the store cannot be read.
    public init(of container: ModelContainer) throws {
        do {
            pendingChanges = try Self.unpushedChanges(of: container)
            (lastSync, cursor, conflicts, quarantined, waitingLocal, keptForNewerSchema) = try container.read { db in
                let state = try SyncState.read(db)
                let counts = try SyncStore.quarantineCounts(db)
                return (
                    state?.lastSync, state.flatMap { $0.cursor.isEmpty ? nil : $0.cursor },
                    try SyncStore.count("tandem_sync_conflict", db), try SyncStore.count("tandem_sync_quarantine", db),
                    counts.local, counts.kept
                )
            }
            pendingChanges += waitingLocal
            clockOffset = try container.serverClock()?.offset
        } catch let error as SyncError {
            throw error
        } catch {
            throw SyncError(.store, "the store failed: \(error)")
        }
    }

    /// ``pendingChanges`` alone: what the engine tells the server on its pulls
    /// (`Tandem-Pending`), so the operator's dashboard shows what `tandem status` shows.
    ///
    /// - Throws: ``SyncError`` with code `store` when the store cannot be read.
    public static func pendingChanges(of container: ModelContainer) throws -> Int {
        do {
            return try unpushedChanges(of: container) + (try container.read { db in try SyncStore.quarantineCounts(db).local })
        } catch {
            throw SyncError(.store, "the store failed: \(error)")
        }
    }

    /// The changes of the journal's transactions the engine has not pushed.
    private static func unpushedChanges(of container: ModelContainer) throws -> Int {
        try container.fetchHistory(container.unpushedHistory()).reduce(0) { $0 + $1.changes.count }
    }

    /// The conflict log, newest first.
    public static func conflicts(of container: ModelContainer, limit: Int = 100) throws -> [SyncConflict] {
        do { return try container.read { db in try SyncStore.conflicts(db, limit: limit) } } catch {
            throw SyncError(.store, "the store failed: \(error)")
        }
    }

    /// Quarantined changes, newest first.
    public static func quarantined(of container: ModelContainer, limit: Int = 100) throws -> [QuarantinedChange] {
        do { return try container.read { db in try SyncStore.quarantined(db, limit: limit) } } catch {
            throw SyncError(.store, "the store failed: \(error)")
        }
    }
}

public import TandemWire
import Foundation

extension SyncEngine {
    /// How far this store's cursor is behind the dataset's log head, as the server counts it
    /// (`GET …/lag`, feature `client-activity`): what `tandem status --server` shows, and what
    /// the operator's dashboard shows for this store's ``clientID`` after its last pull.
    /// `nil` while the store has never pulled or is in the middle of a bootstrap (its cursor is
    /// no log position yet).
    ///
    /// ```swift
    /// if let lag = try await engine.lag() { print("\(lag.behind) log entries behind") }
    /// ```
    ///
    /// - Throws: ``SyncError``: `rejected` with the server's code as on a pull (a cursor of
    ///   another epoch is `cursor_epoch`: `tandem sync` resyncs it), `unreachable`,
    ///   `misconfigured` from a server without feature `client-activity` (404), or `store`.
    public func lag() async throws -> DatasetLag? {
        // Read only: a store that never synced has no sync tables (and gets none from this).
        guard let state = try read({ db in try SyncState.read(db) }), state.bootstrapMode == 0, !state.cursor.isEmpty else { return nil }
        return try await lag(after: state.cursor)
    }

    /// How far `cursor` is behind the dataset's log head (``lag()`` for a cursor given).
    func lag(after cursor: String) async throws -> DatasetLag {
        let response = try await call("GET", "/v1/datasets/\(dataset)/lag?after=\(cursor)")
        do {
            return try JSONDecoder().decode(DatasetLag.self, from: response.body)
        } catch {
            throw SyncError(.invalidResponse, "GET …/lag answered what is not a lag: \(error)")
        }
    }
}

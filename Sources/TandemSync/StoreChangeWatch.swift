import Foundation
import GRDB
import Tandem

/// A cheap check for commits to a store by anyone: this process's writes, the app's in
/// another process, the sync's own. It reads `PRAGMA data_version` on a read-only connection
/// of its own (SQLite changes that number when another connection commits; reading it
/// touches no table), so the live engine can check often without reading the journal. An
/// in-memory store, which no other connection can reach, is watched by its history token.
///
/// ```swift
/// var watch = StoreChangeWatch(container)
/// if watch.changed() { /* something committed since the last check */ }
/// ```
struct StoreChangeWatch {
    private let container: ModelContainer
    private let connection: DatabaseQueue?
    private var version: Int64?
    private var token: HistoryToken?

    init(_ container: ModelContainer) {
        self.container = container
        var connection: DatabaseQueue?
        if let file = container.configurations.first, !file.isStoredInMemoryOnly, let url = file.url {
            var configuration = Configuration()
            configuration.readonly = true
            configuration.label = "tandem.sync.watch"
            connection = try? DatabaseQueue(path: url.path, configuration: configuration)
        }
        self.connection = connection
        _ = changed()
    }

    /// Whether anything committed since the last call (`true` when it cannot tell).
    mutating func changed() -> Bool {
        // One prepared statement on the queue's connection: no transaction, no read-only
        // toggling (GRDB's `read` costs several statements per call; this runs 40 times a second).
        if let connection, let now = try? connection.inDatabase({ db in try Int64.fetchOne(db.cachedStatement(sql: "PRAGMA data_version")) }) {
            defer { version = now }
            return version != now
        }
        guard let now = try? container.currentHistoryToken() else { return true }
        defer { token = now }
        return token != now
    }
}

import Foundation
import GRDB
import Logging
import Testing
import TandemSyncTestSupport
import Tandem
@testable import TandemSync

/// The engine's state in the store: typed rows, and sync tables of another format refused
/// with a message that says what to do.
@Suite("Sync state")
struct SyncStateTests {
    @Test func theStateRowIsMadeOnceWithAClientIDThatStays() throws {
        let store = try SyncFixtures.memoryStore("todos")
        let first = try store.write(author: SyncStore.author) { db in
            try SyncStore.create(db)
            return try #require(try SyncState.read(db))
        }
        #expect(first.formatVersion == SyncStore.formatVersion && first.cursor.isEmpty && !first.snapshotPushed && first.lastSync == nil)
        try store.write(author: SyncStore.author) { db in
            try SyncState.update(db) { $0.cursor = "c1.abc" }
            try SyncStore.create(db)  // again: nothing replaced
        }
        let again = try store.read { db in try SyncState.read(db) }
        #expect(again?.clientID == first.clientID && again?.cursor == "c1.abc")
    }

    /// The same two writes meeting again (a resync after a restore pulls the log from the
    /// start again) are the conflict already logged: logged once.
    @Test func aConflictBetweenTheSameTwoWritesIsLoggedOnce() throws {
        let store = try SyncFixtures.memoryStore("todos")
        func conflict(_ remote: String?) -> SyncConflict {
            SyncConflict(
                at: 1, record: "tandem://todos/Todo/1", attribute: "title", localValue: #""b""#, localStamp: "01a226133758-0000-0000000000000001",
                remoteValue: #""a""#, remoteStamp: remote, winner: .local, rule: "lastWriterWins")
        }
        let logged = try store.write(author: SyncStore.author) { db in
            try SyncStore.create(db)
            return [
                try SyncStore.recordConflict(conflict("01a226133757-0000-0000000000000002"), db),
                try SyncStore.recordConflict(conflict("01a226133757-0000-0000000000000002"), db),
                try SyncStore.recordConflict(conflict("01a226133756-0000-0000000000000002"), db),  // another write
                try SyncStore.recordConflict(conflict(nil), db), try SyncStore.recordConflict(conflict(nil), db),  // no stamp: each is its own
            ]
        }
        #expect(logged == [true, false, true, true, true])
        #expect(try SyncStatus.conflicts(of: store).count == 4)
    }

    @Test func syncTablesOfAnEarlierFormatAreRefusedWithWhatToDo() async throws {
        let store = try SyncFixtures.memoryStore("todos")
        try store.write(author: SyncStore.author) { db in
            // Format 2's state: a key/value table.
            try db.execute(sql: "CREATE TABLE tandem_sync_state (key TEXT NOT NULL PRIMARY KEY, value TEXT NOT NULL)")
            try db.execute(sql: "INSERT INTO tandem_sync_state VALUES ('formatVersion', '2'), ('cursor', 'c1.x')")
        }
        let transport = MemoryTransport { _ in
            Issue.record("nothing is sent"); return TransportResponse(status: 500)
        }
        let engine = SyncEngine(
            container: store, transport: transport, configuration: SyncConfiguration(token: { "t" }),
            logger: Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() }))
        let error = await #expect(throws: SyncError.self) { try await engine.sync() }
        #expect(error?.code == .store)
        #expect(error?.message.contains("format 2") == true && error?.message.contains("start a new store") == true, "\(error?.message ?? "")")
        // Untouched.
        #expect(try store.read { db in try String.fetchOne(db, sql: "SELECT value FROM tandem_sync_state WHERE key = 'cursor'") } == "c1.x")
    }
}

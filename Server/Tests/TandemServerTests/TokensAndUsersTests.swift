import Foundation
import GRDB
import Hummingbird
import HTTPTypes
import NIOConcurrencyHelpers
import Testing
@testable import TandemServer
import TandemWire

/// Scoped and expiring tokens, the operator's lists, removing users and deleting datasets,
/// on every storage.
@Suite("Tokens, users and deleting datasets")
struct TokensAndUsersTests {
    @Test(arguments: StorageKind.allCases)
    func aScopedReadOnlyTokenPullsItsDatasetOnlyAndStopsAtItsExpiry(kind: StorageKind) async throws {
        let clock = NIOLockedValueBox<Int64>(1_800_000_000_000)
        let harness = try await ServerHarness.make(kind, now: { clock.withLockedValue { $0 } })
        let storage = harness.storage
        try await harness.run { client in
            try await client.setUp("todos", token: harness.ann)
            try await client.setUp("other", token: harness.ann)
            #expect(try await client.push("todos", token: harness.ann, key: "k", PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("todos", 1)])).status == .ok)
            let ann = try #require(try await storage.user(named: "ann"))
            let todos = try #require(try await storage.datasetID(owner: ann.id, name: "todos"))
            let scope = TokenScope(datasets: [todos], readOnly: true, expiresAt: 1_800_000_060_000)
            let token = try await TokenIssuer.issue(for: ann, in: storage, scope: scope, now: 1_800_000_000_000)

            let listed = try #require(try await storage.tokens(user: ann.id).first { $0.scope == scope })
            #expect(listed.datasets == ["ann/todos"] && listed.user == "ann" && listed.revokedAt == nil)
            #expect(try await client.pullAll("todos", token: token, limit: 10).count == 1)
            let push = try await client.push("todos", token: token, key: "r", PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("todos", 2)]))
            #expect(push.status == .forbidden && push.errorCode == "read_only_token")
            let elsewhere = try await client.send(.get, "/v1/datasets/other/pull", token: token)
            #expect(elsewhere.status == .forbidden && elsewhere.errorCode == "token_scope")
            let create = try await client.send(.put, "/v1/datasets/fresh", token: token)
            #expect(create.status == .forbidden, "a limited token makes no dataset")
            #expect(try await storage.datasetID(owner: ann.id, name: "fresh") == nil)
            let list = try await client.send(.get, "/v1/datasets", token: token).decode(DatasetList.self)
            #expect(list.datasets.map(\.name) == ["todos"], "it lists what it reaches")

            clock.withLockedValue { $0 = 1_800_000_060_000 }
            let expired = try await client.send(.get, "/v1/datasets/todos/pull", token: token)
            #expect(expired.status == .unauthorized && expired.errorCode == "token_expired")
            #expect(try await client.send(.get, "/v1/datasets/todos/pull", token: harness.ann).status == .ok, "other tokens go on")
        }
    }

    @Test(arguments: StorageKind.allCases)
    func theUsersListCountsWhatEachHoldsAndARemovedUsersTokensStopAtOnce(kind: StorageKind) async throws {
        let harness = try await ServerHarness.make(kind)
        let storage = harness.storage
        try await harness.run { client in
            try await client.setUp("todos", token: harness.ann)
            #expect(try await client.json(.put, "/v1/datasets/todos/members/bob", token: harness.ann, MemberRole(role: .writer)).status == .created)
            // An expired token and a revoked one are no live tokens.
            let bobUser = try #require(try await storage.user(named: "bob"))
            _ = try await TokenIssuer.issue(for: bobUser, in: storage, scope: TokenScope(expiresAt: 1_000))
            let revoked = try await TokenIssuer.issue(for: bobUser, in: storage)
            #expect(try await storage.revokeToken(id: String(revoked.dropFirst(4).prefix(12))))
            let users = try await storage.users(now: 2_000)
            #expect(users.map(\.user.name) == ["ann", "bob"])
            #expect(users.map(\.datasets) == [1, 0] && users.map(\.memberships) == [0, 1] && users.map(\.tokens) == [1, 1])
            let shared = try await client.send(.get, "/v1/datasets", token: harness.bob).decode(DatasetList.self).datasets
            #expect(shared.map { "\($0.owner ?? "")/\($0.name)=\($0.role?.rawValue ?? "")" } == ["ann/todos=writer"])

            let ann = try #require(try await storage.user(named: "ann"))
            await #expect(throws: StorageError.self, "an owner of datasets stays") { try await storage.removeUser(id: ann.id) }
            let bob = try #require(try await storage.user(named: "bob"))
            try await storage.removeUser(id: bob.id)
            #expect(try await client.send(.get, "/v1/datasets/ann~todos/pull", token: harness.bob).status == .unauthorized)
            #expect(try await storage.members(dataset: try #require(try await storage.datasetID(owner: ann.id, name: "todos"))).isEmpty)
            #expect(try await storage.users(now: 0).map(\.user.name) == ["ann"])
            #expect(try await storage.tokens(user: nil).map(\.user) == ["ann"])
            // The name can be taken again, by a new user who reaches nothing of the old one's.
            let again = try await TokenIssuer.issue(for: try await storage.addUser(name: "bob", now: 0), in: storage)
            #expect(try await client.send(.get, "/v1/datasets/ann~todos/pull", token: again).errorCode == "not_shared")
        }
    }

    @Test(arguments: StorageKind.allCases)
    func userNamesAreUniqueWhateverTheirCase(kind: StorageKind) async throws {
        let storage = try await kind.make()
        _ = try await storage.addUser(name: "ann", now: 0)
        await #expect(throws: StorageError.self) { try await storage.addUser(name: "Ann", now: 0) }
        await #expect(throws: StorageError.self) { try await storage.addUser(name: "ann", now: 0) }
        #expect(try await storage.users(now: 0).map(\.user.name) == ["ann"])
        #expect(try await storage.user(named: "ANN") == nil, "names are looked up as written")
    }

    @Test(arguments: StorageKind.allCases)
    func aDeletedDatasetIsGoneForEveryoneItsDataPurgedAndItsNameFree(kind: StorageKind) async throws {
        let harness = try await ServerHarness.make(kind) { $0.maxPullWait = LivePullTests.maxPullWait }
        let storage = harness.storage
        try await harness.run { client in
            try await client.setUp("todos", token: harness.ann)
            let changes = (1...50).map { ServerHarness.insert("todos", $0) }
            #expect(try await client.push("todos", token: harness.ann, key: "k", PushRequest(schemaVersion: 1, changes: changes)).status == .ok)
            #expect(try await client.json(.put, "/v1/datasets/todos/members/bob", token: harness.ann, MemberRole(role: .admin)).status == .created)
            let ann = try #require(try await storage.user(named: "ann"))
            #expect(try await storage.storedBytes(owner: ann.id) > 0)

            let page = try await client.pull("ann~todos", token: harness.bob, limit: 100)
            let ownersCursor = try await client.pull("todos", token: harness.ann, limit: 100).nextCursor
            // A wait of 240 s answered within 120: far apart on a loaded machine.
            async let waiting = client.send(.get, "/v1/datasets/ann~todos/pull?after=\(page.nextCursor)&wait=240", token: harness.bob)
            try await LivePullTests.waitUntil(storage.logSignals, holds: 1)
            let byAdmin = try await client.send(.delete, "/v1/datasets/ann~todos", token: harness.bob)
            #expect(byAdmin.status == .forbidden && byAdmin.errorCode == "not_owner")
            let started = ContinuousClock.now
            #expect(try await client.send(.delete, "/v1/datasets/todos", token: harness.ann).status == .noContent)
            let answer = try await waiting
            #expect(answer.status == .notFound, "a waiting pull answers the deletion: \(String(decoding: answer.body, as: UTF8.self))")
            #expect(ContinuousClock.now - started < .seconds(120))
            #expect(try await client.send(.get, "/v1/datasets/ann~todos/pull", token: harness.bob).status == .notFound)
            #expect(try await client.send(.get, "/v1/datasets", token: harness.bob).decode(DatasetList.self).datasets.isEmpty)
            #expect(try await client.send(.delete, "/v1/datasets/todos", token: harness.ann).status == .notFound)
            #expect(try await storage.storedBytes(owner: ann.id) == 0, "the quota is free at once")

            try await MaintenanceService(dependencies: harness.dependencies, logger: .init(label: "test")).runOnce()
            #expect(try await storage.purgeDeletedDatasets(limit: 10) == 0, "nothing is left to purge")
            if let sqlite = storage as? SQLiteServerStorage {
                let left = try await sqlite.pool.read { db in
                    try SQLiteServerStorage.purgedTables.map { try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \($0.table)") ?? 0 }.reduce(0, +)
                        + (Int.fetchOne(db, sql: "SELECT COUNT(*) FROM deleted_datasets WHERE purged = 0") ?? 0)
                }
                #expect(left == 0, "every row of the deleted dataset is purged")
            }

            // A new dataset of the name starts empty, with no members.
            try await client.setUp("todos", token: harness.ann)
            #expect(try await client.pullAll("todos", token: harness.ann, limit: 100).isEmpty)
            // A cursor of the deleted dataset says so (its client resyncs into the new one);
            // a cursor of any other dataset stops the sync.
            let stale = try await client.send(.get, "/v1/datasets/todos/pull?after=\(ownersCursor)", token: harness.ann)
            #expect(stale.status == .conflict && stale.errorCode == "cursor_dataset_deleted", "\(String(decoding: stale.body, as: UTF8.self))")
            try await client.setUp("todos", token: harness.bob)
            _ = try await client.push("todos", token: harness.bob, key: "b", PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("todos", 7)]))
            let bobs = try await client.pull("todos", token: harness.bob, limit: 10).nextCursor
            let other = try await client.send(.get, "/v1/datasets/todos/pull?after=\(bobs)", token: harness.ann)
            #expect(other.status == .conflict && other.errorCode == "cursor_other_dataset")
            #expect(try await client.send(.get, "/v1/datasets/ann~todos/pull", token: harness.bob).errorCode == "not_shared")
        }
    }

    @Test(arguments: StorageKind.allCases)
    func aPushThatReachesTheStorageAfterItsDatasetWasDeletedWritesNothing(kind: StorageKind) async throws {
        let storage = try await kind.make()
        let ann = try await storage.addUser(name: "ann", now: 0)
        _ = try await storage.createDataset(owner: ann.id, name: "todos", now: 0, limit: 10)
        let id = try #require(try await storage.datasetID(owner: ann.id, name: "todos"))
        #expect(try await storage.deleteDataset(id: id))
        // Authorized before the delete, queued after it (it waited for its body or its turn).
        await #expect(throws: StorageError.self) {
            try await storage.push(dataset: id, key: "k", requestHash: "h", now: 0, changes: 1, job: PushJob { _ in Data("{}".utf8) })
        }
        #expect(try await storage.deletedDatasetIDs(owner: ann.id, name: "todos") == [id])
        // A new dataset of the name never takes the old id.
        _ = try await storage.createDataset(owner: ann.id, name: "todos", now: 0, limit: 10)
        #expect(try await storage.datasetID(owner: ann.id, name: "todos") != id)
    }

    /// Deleting a dataset shrinks what the datasets hold: the SQLite storage must not take
    /// that for a restore from an older copy (which would start a new epoch and make every
    /// client resync).
    @Test func aDeletionIsNotMistakenForARestore() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "tandem-delete-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appending(path: "tandem.sqlite").path(percentEncoded: false)
        var storage: SQLiteServerStorage? = try SQLiteServerStorage(path: path)
        let token = try await TokenIssuer.issue(for: try await storage!.addUser(name: "ann", now: 0), in: storage!)
        let harness = ServerHarness(
            storage: storage!, dependencies: ServerDependencies(storage: storage!, now: { 1_800_000_000_000 }), ann: token, bob: token)
        try await harness.run { client in
            try await client.setUp("todos", token: token)
            let changes = (1...20).map { ServerHarness.insert("todos", $0) }
            #expect(try await client.push("todos", token: token, key: "k", PushRequest(schemaVersion: 1, changes: changes)).status == .ok)
        }
        let epoch = storage!.epoch
        await storage!.refreshMark()
        let ann = try #require(try await storage!.user(named: "ann"))
        #expect(try await storage!.deleteDataset(id: try #require(try await storage!.datasetID(owner: ann.id, name: "todos"))))
        storage = nil
        let reopened = try SQLiteServerStorage(path: path)
        #expect(reopened.epoch == epoch, "the same history: no client resyncs")
    }

    @Test func purgingGoesInStepsOfTheLimit() async throws {
        let storage = try await StorageKind.sqlite.make()
        let ann = try await storage.addUser(name: "ann", now: 0)
        let token = try await TokenIssuer.issue(for: ann, in: storage)
        let harness = ServerHarness(storage: storage, dependencies: ServerDependencies(storage: storage, now: { 1_800_000_000_000 }), ann: token, bob: token)
        try await harness.run { client in
            try await client.setUp("todos", token: token)
            let changes = (1...120).map { ServerHarness.insert("todos", $0) }
            #expect(try await client.push("todos", token: token, key: "k", PushRequest(schemaVersion: 1, changes: changes)).status == .ok)
        }
        let id = try #require(try await storage.datasetID(owner: ann.id, name: "todos"))
        #expect(try await storage.deleteDataset(id: id))
        // 120 log entries, 120 records and the push's stored answer, 50 rows a step.
        var steps: [Int] = []
        while case let purged = try await storage.purgeDeletedDatasets(limit: 50), purged > 0 { steps.append(purged) }
        #expect(steps == [50, 50, 50, 50, 41, 1], "\(steps)")
    }
}

public import Foundation
public import TandemWire
import TandemSchema

/// ``ServerStorage`` in memory: the twin of ``SQLiteServerStorage`` for tests and
/// experiments. A push works on a copy of the state and commits it only when it succeeds.
public actor MemoryServerStorage: ServerStorage {
    struct Dataset {
        var id: Int64
        var owner: Int64
        var info: DatasetInfo
        var schemas: [SchemaVersionInfo] = []
        var records: [String: RecordState] = [:]
        /// `entity \0 key` → the record holding that unique value.
        var unique: [String: String] = [:]
        /// Merged record → its survivor and the merge's stamp.
        var merged: [String: MergedRecord] = [:]
        /// Member record → `owner \0 field` of the link fields that have named it.
        var linkOwners: [String: Set<String>] = [:]
        var idempotent: [String: (hash: String, response: Data, at: Int64)] = [:]
    }

    struct State {
        var users: [ServerUser] = []
        var tokens: [String: (user: Int64, hash: String, revoked: Bool)] = [:]
        var datasets: [Int64: Dataset] = [:]
        /// Each dataset's log, in position order (positions are global, as in SQLite).
        var logs: [Int64: [LogEntry]] = [:]
        var lost: [(dataset: Int64, uri: String, lost: LostValue, position: Int64?, at: Int64)] = []
        var nextID: Int64 = 1
    }

    private var state = State()

    public init() {}

    public func addUser(name: String, now: Int64) throws -> ServerUser {
        guard !state.users.contains(where: { $0.name == name }) else { throw StorageError.conflict("user '\(name)' exists") }
        let user = ServerUser(id: state.nextID, name: name)
        state.nextID += 1
        state.users.append(user)
        return user
    }

    public func user(named name: String) -> ServerUser? { state.users.first { $0.name == name } }

    public func addToken(id: String, secretHash: String, user: Int64, now: Int64) {
        state.tokens[id] = (user, secretHash, false)
    }

    public func revokeToken(id: String) -> Bool {
        guard let token = state.tokens[id], !token.revoked else { return false }
        state.tokens[id]?.revoked = true
        return true
    }

    public func token(id: String) -> (user: ServerUser, secretHash: String)? {
        guard let token = state.tokens[id], !token.revoked, let user = state.users.first(where: { $0.id == token.user }) else { return nil }
        return (user, token.hash)
    }

    public func createDataset(owner: Int64, name: String, now: Int64) -> (DatasetInfo, created: Bool) {
        if let existing = state.datasets.values.first(where: { $0.owner == owner && $0.info.name == name }) {
            return (existing.info, false)
        }
        let dataset = Dataset(id: state.nextID, owner: owner, info: DatasetInfo(name: name, createdAt: now, schemaVersion: 0))
        state.nextID += 1
        state.datasets[dataset.id] = dataset
        return (dataset.info, true)
    }

    public func datasets(owner: Int64) -> [DatasetInfo] {
        state.datasets.values.filter { $0.owner == owner }.map(\.info).sorted { $0.name < $1.name }
    }

    public func datasetID(owner: Int64, name: String) -> Int64? {
        state.datasets.values.first { $0.owner == owner && $0.info.name == name }?.id
    }

    public func schemaHistory(dataset: Int64) -> [SchemaVersionInfo] { state.datasets[dataset]?.schemas ?? [] }

    public func registerSchema(
        dataset: Int64, json: String, now: Int64,
        check: @Sendable ([SchemaVersionInfo]) throws -> Bool
    ) throws -> SchemaRegistration {
        guard var stored = state.datasets[dataset] else { throw StorageError.notFound("dataset") }
        guard try check(stored.schemas) else { return SchemaRegistration(version: stored.schemas.count, created: false) }
        let version = stored.schemas.count + 1
        stored.schemas.append(SchemaVersionInfo(version: version, registeredAt: now, schema: json))
        stored.info.schemaVersion = version
        state.datasets[dataset] = stored
        return SchemaRegistration(version: version, created: true)
    }

    public func push(
        dataset: Int64, key: String, requestHash: String, now: Int64, changes: Int,
        apply: @escaping @Sendable (inout any PushTransaction) throws -> Data
    ) throws -> StoredPush {
        guard let stored = state.datasets[dataset] else { throw StorageError.notFound("dataset") }
        if let previous = stored.idempotent[key] {
            return StoredPush(response: previous.response, requestHash: previous.hash, replayed: true)
        }
        var transaction: any PushTransaction = Transaction(state: state, dataset: dataset)
        let response = try apply(&transaction)
        var committed = (transaction as! Transaction).state  // the only implementation made above
        committed.datasets[dataset]?.idempotent[key] = (requestHash, response, now)
        state = committed
        return StoredPush(response: response, requestHash: requestHash, replayed: false)
    }

    public func pruneIdempotencyKeys(before cutoff: Int64) -> Int {
        var pruned = 0
        for id in state.datasets.keys {
            let old = state.datasets[id]!.idempotent.filter { $0.value.at < cutoff }.map(\.key)
            for key in old { state.datasets[id]!.idempotent[key] = nil }
            pruned += old.count
        }
        return pruned
    }

    public func pull(dataset: Int64, after position: Int64, limit: Int) -> (entries: [LogEntry], hasMore: Bool) {
        // Binary search for the first entry after `position`: cost follows the page, not the log.
        let log = state.logs[dataset] ?? []
        var low = 0, high = log.count
        while low < high {
            let middle = (low + high) / 2
            if log[middle].position <= position { low = middle + 1 } else { high = middle }
        }
        let entries = log[low...].prefix(limit + 1)
        return (Array(entries.prefix(limit)), entries.count > limit)
    }

    public func logHead(dataset: Int64) -> Int64 { state.logs[dataset]?.last?.position ?? 0 }

    public func checkHealth() {}

    /// Lost values recorded for a dataset (tests read them).
    public func lostValues(dataset: Int64) -> [LostValue] {
        state.lost.filter { $0.dataset == dataset }.map(\.lost)
    }

    private struct Transaction: PushTransaction {
        var state: State
        let dataset: Int64

        func record(_ uri: String) -> RecordState? { state.datasets[dataset]?.records[uri] }

        mutating func setRecord(_ uri: String, _ record: RecordState) { state.datasets[dataset]?.records[uri] = record }

        mutating func appendLog(_ change: WireChange, schemaVersion: Int) -> Int64 {
            let position = state.nextID
            state.nextID += 1
            state.logs[dataset, default: []].append(LogEntry(position: position, change: change, schemaVersion: schemaVersion))
            return position
        }

        mutating func recordLost(_ lost: LostValue, record uri: String, position: Int64?, at now: Int64) {
            state.lost.append((dataset, uri, lost, position, now))
        }

        func lastLogPosition() -> Int64 { state.logs[dataset]?.last?.position ?? 0 }

        mutating func claimUnique(entity: String, key: String, record uri: String) -> String? {
            let slot = entity + "\0" + key
            if let holder = state.datasets[dataset]?.unique[slot] { return holder == uri ? nil : holder }
            state.datasets[dataset]?.unique[slot] = uri
            return nil
        }

        mutating func releaseUnique(entity: String, key: String, record uri: String) {
            let slot = entity + "\0" + key
            if state.datasets[dataset]?.unique[slot] == uri { state.datasets[dataset]?.unique[slot] = nil }
        }

        mutating func setMerged(_ loser: String, _ merged: MergedRecord?) {
            state.datasets[dataset]?.merged[loser] = merged
        }

        func mergedInto(_ uri: String) -> MergedRecord? { state.datasets[dataset]?.merged[uri] }

        mutating func addLinkOwner(_ owner: String, field: String, member: String) {
            state.datasets[dataset]?.linkOwners[member, default: []].insert(owner + "\0" + field)
        }

        func linkOwners(of member: String) -> [(owner: String, field: String)] {
            (state.datasets[dataset]?.linkOwners[member] ?? []).sorted().map { entry in
                let parts = entry.split(separator: "\0", maxSplits: 1, omittingEmptySubsequences: false)
                return (String(parts[0]), String(parts[1]))
            }
        }
    }
}

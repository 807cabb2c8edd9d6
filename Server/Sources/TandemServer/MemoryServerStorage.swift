public import Foundation
public import TandemWire
import NIOConcurrencyHelpers
import TandemSchema

/// ``ServerStorage`` in memory: the twin of ``SQLiteServerStorage`` for tests and
/// experiments. A push works on a copy of the state and commits it only when it succeeds.
public actor MemoryServerStorage: ServerStorage {
    public nonisolated let cursorKey = Cursor.newKey()
    public nonisolated var epoch: UInt64 { currentEpoch.withLockedValue { $0 } }
    public nonisolated let logSignals = LogSignals()
    private nonisolated let currentEpoch = NIOLockedValueBox(Cursor.newEpoch())

    public func startNewEpoch() async throws -> UInt64 {
        let epoch = Cursor.newEpoch()
        currentEpoch.withLockedValue { $0 = epoch }
        return epoch
    }

    struct Dataset {
        var id: Int64
        var owner: Int64
        var info: DatasetInfo
        var schemas: [SchemaVersionInfo] = []
        var records: [String: RecordState] = [:]
        /// The record holding each unique value.
        var unique: [UniqueSlot: String] = [:]
        /// Merged record → its survivor and the merge's stamp.
        var merged: [String: MergedRecord] = [:]
        /// Member record → the link fields that have named it.
        var linkOwners: [String: Set<LinkOwner>] = [:]
        var idempotent: [String: (hash: String, response: Data, at: Int64)] = [:]
        /// The bytes of its log entries, lost values and schema versions (as the SQLite
        /// storage counts them).
        var storedBytes: Int64 = 0
        var compactedThrough: Int64 = 0
        var tombstonesBefore: Int64 = 0
        var marks: [LogMark] = []
    }

    struct State {
        var users: [ServerUser] = []
        /// JWT subject → the user bound to it.
        var subjects: [String: Int64] = [:]
        /// User id → when they were added.
        var userCreated: [Int64: Int64] = [:]
        var tokens: [String: (user: Int64, hash: String, scope: TokenScope, created: Int64, revoked: Int64?)] = [:]
        var datasets: [Int64: Dataset] = [:]
        /// Each dataset's log, in position order.
        var logs: [Int64: [LogEntry]] = [:]
        var lost: [(dataset: Int64, uri: String, lost: LostValue, position: Int64?, at: Int64)] = []
        /// Deleted datasets' ids by owner and name.
        var deleted: [Int64: [String: [Int64]]] = [:]
        /// Dataset → member → role.
        var members: [Int64: [Int64: DatasetRole]] = [:]
        /// The next user or dataset id.
        var nextID: Int64 = 1
    }

    private var state = State()

    public init() {}

    public func addUser(name: String, now: Int64, subject: String?) throws -> ServerUser {
        // Unique whatever their case: "Ann" is never a second "ann".
        if let existing = state.users.first(where: { $0.name.lowercased() == name.lowercased() }) {
            throw StorageError.conflict(existing.name == name ? "user '\(name)' exists" : "user '\(existing.name)' exists (user names are unique whatever their case)")
        }
        if let subject, state.subjects[subject] != nil { throw StorageError.conflict("the sign-in subject '\(subject)' is bound to another user") }
        let user = ServerUser(id: state.nextID, name: name)
        state.nextID += 1
        state.users.append(user)
        state.userCreated[user.id] = now
        if let subject { state.subjects[subject] = user.id }
        return user
    }

    public func user(subject: String) -> ServerUser? {
        state.subjects[subject].flatMap { id in state.users.first { $0.id == id } }
    }

    public func users(now: Int64) -> [UserSummary] {
        state.users.sorted { $0.name < $1.name }.map { user in
            UserSummary(
                user: user, createdAt: state.userCreated[user.id] ?? 0,
                datasets: state.datasets.values.count { $0.owner == user.id },
                memberships: state.members.values.count { $0[user.id] != nil },
                tokens: state.tokens.values.count { $0.user == user.id && $0.revoked == nil && !$0.scope.hasExpired(at: now) })
        }
    }

    public func removeUser(id: Int64) throws {
        guard let user = state.users.first(where: { $0.id == id }) else { throw StorageError.notFound("no user with id \(id)") }
        let owned = state.datasets.values.filter { $0.owner == id }.map(\.info.name).sorted()
        guard owned.isEmpty else {
            throw StorageError.conflict("user '\(user.name)' owns datasets (\(owned.joined(separator: ", "))); delete them first")
        }
        state.users.removeAll { $0.id == id }
        state.subjects = state.subjects.filter { $0.value != id }
        state.userCreated[id] = nil
        state.tokens = state.tokens.filter { $0.value.user != id }
        for dataset in state.members.keys { state.members[dataset]?[id] = nil }
    }

    public func user(named name: String) -> ServerUser? { state.users.first { $0.name == name } }

    public func addToken(id: String, secretHash: String, user: Int64, scope: TokenScope, now: Int64) {
        state.tokens[id] = (user, secretHash, scope, now, nil)
    }

    public func revokeToken(id: String) -> Bool {
        guard let token = state.tokens[id], token.revoked == nil else { return false }
        state.tokens[id]?.revoked = Int64(Date().timeIntervalSince1970 * 1000)
        return true
    }

    public func token(id: String) -> StoredToken? {
        guard let token = state.tokens[id], token.revoked == nil, let user = state.users.first(where: { $0.id == token.user }) else { return nil }
        return StoredToken(user: user, secretHash: token.hash, scope: token.scope)
    }

    public func tokens(user: Int64?) -> [TokenInfo] {
        state.tokens.compactMap { id, token -> TokenInfo? in
            guard user == nil || token.user == user, let owner = state.users.first(where: { $0.id == token.user }) else { return nil }
            let datasets = (token.scope.datasets ?? []).compactMap { dataset in
                state.datasets[dataset].flatMap { found in
                    state.users.first { $0.id == found.owner }.map { "\($0.name)/\(found.info.name)" }
                }
            }
            return TokenInfo(id: id, user: owner.name, createdAt: token.created, revokedAt: token.revoked, scope: token.scope, datasets: datasets)
        }
        .sorted { ($0.user, $0.createdAt, $0.id) < ($1.user, $1.createdAt, $1.id) }
    }

    public func setOperator(user: Int64, _ isOperator: Bool) throws {
        guard let index = state.users.firstIndex(where: { $0.id == user }) else { throw StorageError.notFound("no user with id \(user)") }
        state.users[index].isOperator = isOperator
    }

    public func setQuota(user: Int64, _ quota: UserQuota) throws {
        guard let index = state.users.firstIndex(where: { $0.id == user }) else { throw StorageError.notFound("no user with id \(user)") }
        state.users[index].quota = quota
    }

    public func storedBytes(owner: Int64) -> Int64 {
        state.datasets.values.filter { $0.owner == owner }.reduce(0) { $0 + $1.storedBytes }
    }

    public func createDataset(owner: Int64, name: String, now: Int64, limit: Int) throws -> (DatasetInfo, created: Bool) {
        if let existing = state.datasets.values.first(where: { $0.owner == owner && $0.info.name == name }) {
            return (existing.info, false)
        }
        guard state.datasets.values.count(where: { $0.owner == owner }) < limit else {
            throw StorageError.datasetQuota(limit)
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

    public func datasets(reachableBy user: Int64) -> [ReachableDataset] {
        state.datasets.values.compactMap { dataset -> (String, ReachableDataset)? in
            guard let role = dataset.owner == user ? .admin : state.members[dataset.id]?[user],
                let owner = state.users.first(where: { $0.id == dataset.owner })
            else { return nil }
            var info = dataset.info
            info.owner = owner.name
            info.role = role
            return (owner.name, ReachableDataset(id: dataset.id, info: info))
        }
        .sorted { ($0.0, $0.1.info.name) < ($1.0, $1.1.info.name) }.map(\.1)
    }

    public func deleteDataset(id: Int64) -> Bool {
        guard let dataset = state.datasets.removeValue(forKey: id) else { return false }
        state.deleted[dataset.owner, default: [:]][dataset.info.name, default: []].append(id)
        // Memory has no long transactions: the data goes at once.
        state.logs[id] = nil
        state.members[id] = nil
        state.lost.removeAll { $0.dataset == id }
        return true
    }

    public func purgeDeletedDatasets(limit: Int) -> Int { 0 }

    public func deletedDatasetIDs(owner: Int64, name: String) -> [Int64] { state.deleted[owner]?[name] ?? [] }

    public func setMember(dataset: Int64, user: Int64, role: DatasetRole, now: Int64) {
        state.members[dataset, default: [:]][user] = role
    }

    public func removeMember(dataset: Int64, user: Int64) -> Bool {
        state.members[dataset]?.removeValue(forKey: user) != nil
    }

    public func members(dataset: Int64) -> [DatasetMember] {
        (state.members[dataset] ?? [:]).compactMap { id, role in state.users.first { $0.id == id }.map { DatasetMember(user: $0.name, role: role) } }
            .sorted { $0.user < $1.user }
    }

    public func role(dataset: Int64, user: Int64) -> DatasetRole? { state.members[dataset]?[user] }

    public func schemaHistory(dataset: Int64) -> [SchemaVersionInfo] { state.datasets[dataset]?.schemas ?? [] }

    public func registerSchema(dataset: Int64, json: String, now: Int64, after versions: Int) throws -> SchemaRegistration? {
        guard var stored = state.datasets[dataset] else { throw StorageError.notFound("dataset") }
        guard stored.schemas.count == versions else { return nil }
        let version = versions + 1
        stored.schemas.append(SchemaVersionInfo(version: version, registeredAt: now, schema: json))
        stored.info.schemaVersion = version
        stored.storedBytes += Int64(json.utf8.count)
        state.datasets[dataset] = stored
        return SchemaRegistration(version: version, created: true)
    }

    public func push(dataset: Int64, key: String, requestHash: String, now: Int64, changes: Int, job: PushJob) throws -> StoredPush {
        guard let stored = state.datasets[dataset] else { throw StorageError.notFound("dataset") }
        if let previous = stored.idempotent[key] {
            return StoredPush(response: previous.response, requestHash: previous.hash, replayed: true)
        }
        if let limit = job.byteLimit {
            let used = storedBytes(owner: stored.owner)
            guard used < limit else { throw StorageError.byteQuota(stored: used, limit: limit) }
        }
        var store = PushStore(dataset: stored, log: state.logs[dataset] ?? [])
        let response = try PushWorkspace.perform(job, on: &store)
        store.dataset.idempotent[key] = (requestHash, response, now)
        store.dataset.storedBytes += store.loggedBytes
        state.datasets[dataset] = store.dataset
        state.logs[dataset] = store.log
        state.lost += store.lost.map { (dataset, $0.record, $0.lost, $0.position, $0.at) }
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

    public func records(dataset: Int64, after uri: String, limit: Int, maxBytes: Int = .max) -> (records: [StoredRecord], hasMore: Bool) {
        // Byte order, as SQLite's BINARY and PostgreSQL's "C" collation sort.
        let after = Array(uri.utf8)
        let sorted = (state.datasets[dataset]?.records ?? [:])
            .filter { after.lexicographicallyPrecedes($0.key.utf8) }
            .sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        var records: [StoredRecord] = []
        var bytes = 0
        for (uri, state) in sorted {
            guard records.count < limit, records.isEmpty || bytes < maxBytes else { return (records, true) }
            bytes += state.binaryBytes().count
            let merged = self.state.datasets[dataset]?.merged[uri]
            records.append(StoredRecord(uri: uri, state: state, merged: merged.map { ($0.survivor, $0.stamp) }))
        }
        return (records, false)
    }

    public func datasetOverviews() -> [DatasetOverview] {
        let names = Dictionary(state.users.map { ($0.id, $0.name) }, uniquingKeysWith: { a, _ in a })
        return state.datasets.values.map { dataset in
            DatasetOverview(
                id: dataset.id, owner: names[dataset.owner] ?? "", name: dataset.info.name, createdAt: dataset.info.createdAt,
                storedBytes: dataset.storedBytes, records: dataset.records.count, logHead: max(logHead(dataset: dataset.id), dataset.compactedThrough),
                compactedThrough: dataset.compactedThrough, schemaVersions: dataset.schemas.count, members: state.members[dataset.id]?.count ?? 0)
        }.sorted { ($0.owner, $0.name) < ($1.owner, $1.name) }
    }

    public func compaction(dataset: Int64) throws -> CompactionState {
        guard let stored = state.datasets[dataset] else { throw StorageError.notFound("no dataset with id \(dataset)") }
        return CompactionState(
            dataset: dataset, head: logHead(dataset: dataset), compactedThrough: stored.compactedThrough, tombstonesBefore: stored.tombstonesBefore)
    }

    public func compactionStates() throws -> [CompactionState] {
        try state.datasets.keys.sorted().map { try compaction(dataset: $0) }
    }

    public func addLogMark(dataset: Int64, position: Int64, at: Int64) {
        guard state.datasets[dataset] != nil, !state.datasets[dataset]!.marks.contains(where: { $0.position == position }) else { return }
        state.datasets[dataset]!.marks.append(LogMark(position: position, at: at))
        state.datasets[dataset]!.marks.sort { $0.position < $1.position }
    }

    public func logMark(dataset: Int64, notAfter at: Int64?, notPast position: Int64?) -> LogMark? {
        state.datasets[dataset]?.marks.last { $0.at <= at ?? .max && $0.position <= position ?? .max }
    }

    public func compactLog(dataset: Int64, through: Int64, limit: Int) -> Int {
        guard var stored = state.datasets[dataset], var log = state.logs[dataset] else { return 0 }
        let end = min(through, logHead(dataset: dataset) - 1, stored.compactedThrough + Int64(limit))
        guard end > stored.compactedThrough else { return 0 }
        let gone = log.prefix { $0.position <= end }
        let bytes = gone.reduce(Int64(0)) { total, entry in total + Int64(WireJSON.data { $0.append(entry.change) }.count) }
        stored.storedBytes = max(stored.storedBytes - bytes, 0)
        log.removeFirst(gone.count)
        stored.compactedThrough = end
        if let keep = stored.marks.last(where: { $0.position <= end }) { stored.marks.removeAll { $0.position < keep.position } }
        state.datasets[dataset] = stored
        state.logs[dataset] = log
        return max(gone.count, 1)
    }

    public func pruneTombstones(dataset: Int64, before: Int64, after uri: String, limit: Int) -> (last: String?, pruned: Int) {
        guard state.datasets[dataset] != nil else { return (nil, 0) }
        state.datasets[dataset]!.tombstonesBefore = max(state.datasets[dataset]!.tombstonesBefore, before)
        let page = records(dataset: dataset, after: uri, limit: limit).records
        var pruned = 0
        for record in page where record.state.isTombstone(before: before) {
            state.datasets[dataset]!.records[record.uri] = nil
            pruned += 1
        }
        return (page.last?.uri, pruned)
    }

    public func checkHealth() {}

    /// Lost values recorded for a dataset (tests read them).
    public func lostValues(dataset: Int64) -> [LostValue] {
        state.lost.filter { $0.dataset == dataset }.map(\.lost)
    }
}

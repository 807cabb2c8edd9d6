import Foundation
import Logging
import NIOCore
import PostgresNIO
import TandemSchema
import TandemServer
import TandemWire

/// ``AsyncPushStore`` on a PostgreSQL connection inside the push's transaction, which holds
/// the dataset's row lock: each kind of key is read with one query (`= ANY($2)`), and each
/// kind of write is one multi-row statement over arrays (`unnest`), so a push costs a few
/// round trips whatever its size.
///
/// Writes resting on what was not read are checked before the other writes: new records by
/// inserting them (`ON CONFLICT DO NOTHING`; one that was there is refused and the ones just
/// inserted deleted again), claimed unique values by reading their holders. No other
/// transaction writes the dataset's records or unique values while this one holds the
/// dataset's lock, so the checks still hold when the writes run, and a refused write leaves
/// the data as it was.
///
/// ```swift
/// var store = PostgresPushStore(connection: connection, logger: logger, dataset: id, lastLogPosition: head)
/// let answer = try await PushWorkspace.perform(job, onAsync: &store)
/// ```
struct PostgresPushStore: AsyncPushStore {
    let connection: PostgresConnection
    let logger: Logger
    let dataset: Int64
    let lastLogPosition: Int64
    let tombstonesBefore: Int64
    /// The position of the last log entry written (``lastLogPosition`` until one is).
    private(set) var head: Int64
    /// The bytes of the log entries and lost values written (they count in the owner's
    /// stored bytes).
    private(set) var loggedBytes: Int64 = 0
    private var pendingLog: [LogWrite] = []
    private var pendingLost: [(write: LostWrite, json: ByteBuffer)] = []
    /// Whether a statement that changes the database ran (a push that fails after one cannot
    /// leave its batch's transaction clean).
    private(set) var wroteToDatabase = false
    /// In a batch of several pushes: the records the batch's pushes wrote so far, written
    /// by the batch's last statement (``finish(_:records:answers:announce:connection:logger:)``), and read
    /// from here by the pushes after (`nil`: each push writes its records itself).
    private(set) var batch: BatchRecords?

    /// Records a batch of pushes wrote, kept for its last statement.
    struct BatchRecords {
        /// Each record's last state, and whether the batch made it (it must not exist: its
        /// insert is checked when the batch ends, and the batch runs again push by push
        /// when one did).
        var records: [String: (state: [UInt8], isNew: Bool)] = [:]
        var order: [String] = []
    }

    /// `batch`: the records of the batch's pushes before this one, when the records are
    /// written once for the batch.
    init(
        connection: PostgresConnection, logger: Logger, dataset: Int64, lastLogPosition: Int64, tombstonesBefore: Int64 = 0,
        batch: BatchRecords? = nil
    ) {
        self.tombstonesBefore = tombstonesBefore
        self.connection = connection
        self.logger = logger
        self.dataset = dataset
        self.lastLogPosition = lastLogPosition
        self.batch = batch
        head = lastLogPosition
    }

    private func rows(_ query: PostgresQuery) async throws -> [PostgresRow] {
        try await connection.query(query, logger: logger).collect()
    }

    func read(_ keys: PushKeys) async throws -> PushReads {
        var reads = PushReads()
        // What the batch wrote is newer than what is stored.
        let buffered = batch?.records ?? [:]
        let stored = keys.records.filter { buffered[$0] == nil }
        for uri in keys.records {
            if let write = buffered[uri] { reads.records[uri] = try RecordState(stored: Data(write.state)) }
        }
        if !stored.isEmpty {
            for row in try await rows("SELECT uri, state FROM records WHERE dataset_id = \(dataset) AND uri = ANY(\(Array(stored)))") {
                let (uri, state) = try row.decode((String, ByteBuffer).self)
                reads.records[uri] = try RecordState(stored: Data(state.readableBytesView))
            }

        }
        if !keys.merged.isEmpty {
            for row in try await rows(
                "SELECT uri, survivor, stamp, state, remade FROM merged_records WHERE dataset_id = \(dataset) AND uri = ANY(\(Array(keys.merged)))")
            {
                let (uri, survivor, stamp, state, remade) = try row.decode((String, String, String, ByteBuffer?, String?).self)
                guard let stamp = HLCTimestamp(stamp) else { continue }
                reads.merged[uri] = MergedRecord(
                    survivor: survivor, stamp: stamp, state: try state.map { try RecordState(stored: Data($0.readableBytesView)) },
                    remade: remade.flatMap(HLCTimestamp.init))
            }
        }
        if !keys.linkOwners.isEmpty {
            // With the owners' records: a delete of their member reads them next.
            for row in try await rows(
                """
                SELECT l.member, l.owner, l.field, r.state FROM link_members l
                LEFT JOIN records r ON r.dataset_id = l.dataset_id AND r.uri = l.owner
                WHERE l.dataset_id = \(dataset) AND l.member = ANY(\(Array(keys.linkOwners)))
                """)
            {
                let (member, owner, field, state) = try row.decode((String, String, String, ByteBuffer?).self)
                reads.linkOwners[member, default: []].append(LinkOwner(owner: owner, field: field))
                if let write = buffered[owner] {
                    reads.records[owner] = try RecordState(stored: Data(write.state))
                } else if let state {
                    reads.records[owner] = try RecordState(stored: Data(state.readableBytesView))
                }
            }
            // In Swift's order (the database's collation may sort text otherwise).
            for member in reads.linkOwners.keys { reads.linkOwners[member]?.sort() }
        }
        if !keys.unique.isEmpty {
            reads.unique = try await holders(of: keys.unique)
        }
        return reads
    }

    /// The record holding each of `slots` (absent: free).
    private func holders(of slots: some Collection<UniqueSlot>) async throws -> [UniqueSlot: String] {
        var holders: [UniqueSlot: String] = [:]
        for row in try await rows(
            """
            SELECT v.entity, v.key, v.uri FROM unique_values v
            JOIN unnest(\(slots.map(\.entity))::text[], \(slots.map(\.key))::text[]) AS s(entity, key) ON s.entity = v.entity AND s.key = v.key
            WHERE v.dataset_id = \(dataset)
            """)
        {
            let (entity, key, uri) = try row.decode((String, String, String).self)
            holders[UniqueSlot(entity: entity, key: key)] = uri
        }
        return holders
    }

    mutating func write(_ writes: PushWrites) async throws -> PushKeys {
        // Checks first (see the type's comment), then writes. New records are checked by
        // inserting them (one index descent each, which the insert needs anyway): a probe of
        // 100 absent URIs cost 1.3 to 3.7 ms of the dataset's lock, more than the insert.
        var refused = PushKeys()
        if var batch {
            // Records are written when the batch ends; a new one the batch made already is
            // refused here (read, the push runs again), one stored before when the batch ends.
            refused.records = Set(writes.records.filter { $0.isNew && batch.records[$0.uri] != nil }.map(\.uri))
            let unique = refused.isEmpty ? try await settleUnique(writes.unique, refused: &refused) : [:]
            guard refused.isEmpty else { return refused }
            for record in writes.records {
                if let earlier = batch.records[record.uri] {
                    batch.records[record.uri] = (record.state, earlier.isNew)
                } else {
                    batch.records[record.uri] = (record.state, record.isNew)
                    batch.order.append(record.uri)
                }
            }
            self.batch = batch
            wroteToDatabase = wroteToDatabase || !unique.isEmpty || !writes.merged.isEmpty || !writes.linkOwners.isEmpty
            try await writeOthers(writes, unique: unique)
            return refused
        }
        let new = writes.records.filter(\.isNew)
        var inserted: [String] = []
        wroteToDatabase = wroteToDatabase || !writes.isEmpty
        if !new.isEmpty {
            for row in try await rows(
                """
                INSERT INTO records(dataset_id, uri, state)
                SELECT \(dataset), * FROM unnest(\(new.map(\.uri))::text[], \(new.map { ByteBuffer(bytes: $0.state) })::bytea[])
                ON CONFLICT (dataset_id, uri) DO NOTHING RETURNING uri
                """)
            {
                inserted.append(try row.decode(String.self))
            }
            if inserted.count < new.count {
                refused.records = Set(new.map(\.uri)).subtracting(inserted)
            }
        }
        let unique = refused.isEmpty ? try await settleUnique(writes.unique, refused: &refused) : [:]
        guard refused.isEmpty else {
            // Nothing written: the records just made were not there before.
            if !inserted.isEmpty {
                try await connection.query("DELETE FROM records WHERE dataset_id = \(dataset) AND uri = ANY(\(inserted))", logger: logger)
            }
            return refused
        }

        try await writeRecords(writes.records.filter { !$0.isNew })
        try await writeOthers(writes, unique: unique)
        return refused
    }

    /// The writes other than records: unique values, merges, link owners, and the log and
    /// lost values kept for the last statement.
    private mutating func writeOthers(_ writes: PushWrites, unique: [UniqueSlot: String?]) async throws {
        try await writeUnique(unique)
        try await writeMerges(writes.merged)
        if !writes.linkOwners.isEmpty {
            try await connection.query(
                """
                INSERT INTO link_members(dataset_id, member, owner, field)
                SELECT \(dataset), * FROM unnest(\(writes.linkOwners.map(\.member))::text[], \(writes.linkOwners.map(\.owner.owner))::text[],
                                                \(writes.linkOwners.map(\.owner.field))::text[])
                ON CONFLICT DO NOTHING
                """, logger: logger)
        }
        writeLog(writes.log)
        writeLost(writes.lost)
    }

    /// Plays the claims and releases in order over the values' holders as stored: each
    /// value's holder afterwards (`nil`: free), only for the values that change; a claim of a
    /// value another record holds is refused.
    private func settleUnique(_ writes: [UniqueWrite], refused: inout PushKeys) async throws -> [UniqueSlot: String?] {
        guard !writes.isEmpty else { return [:] }
        let stored = try await holders(of: Set(writes.map(\.slot)))
        var holders: [UniqueSlot: String?] = [:]
        for write in writes {
            let holder = holders[write.slot] ?? stored[write.slot]
            if write.claim {
                if holder == nil || holder == write.record {
                    holders[write.slot] = .some(write.record)
                } else {
                    refused.unique.insert(write.slot)
                }
            } else if holder == write.record {
                holders[write.slot] = .some(nil)
            }
        }
        return holders.filter { $0.value != stored[$0.key] }
    }

    private func writeRecords(_ records: [RecordWrite]) async throws {
        guard !records.isEmpty else { return }
        try await connection.query(
            """
            INSERT INTO records(dataset_id, uri, state)
            SELECT \(dataset), * FROM unnest(\(records.map(\.uri))::text[], \(records.map { ByteBuffer(bytes: $0.state) })::bytea[])
            ON CONFLICT (dataset_id, uri) DO UPDATE SET state = EXCLUDED.state
            """, logger: logger)
    }

    private func writeUnique(_ holders: [UniqueSlot: String?]) async throws {
        let freed = holders.filter { $0.value == nil }.map(\.key)
        if !freed.isEmpty {
            try await connection.query(
                """
                DELETE FROM unique_values v USING unnest(\(freed.map(\.entity))::text[], \(freed.map(\.key))::text[]) AS s(entity, key)
                WHERE v.dataset_id = \(dataset) AND v.entity = s.entity AND v.key = s.key
                """, logger: logger)
        }
        let held = holders.compactMap { slot, holder in holder.map { (slot, $0) } }
        if !held.isEmpty {
            try await connection.query(
                """
                INSERT INTO unique_values(dataset_id, entity, key, uri)
                SELECT \(dataset), * FROM unnest(\(held.map(\.0.entity))::text[], \(held.map(\.0.key))::text[], \(held.map(\.1))::text[])
                ON CONFLICT (dataset_id, entity, key) DO UPDATE SET uri = EXCLUDED.uri
                """, logger: logger)
        }
    }

    /// One statement per merge: merges are rare (two records holding one unique value).
    private func writeMerges(_ merges: [(uri: String, merged: MergedRecord?)]) async throws {
        for (loser, merged) in merges {
            if let merged {
                try await connection.query(
                    """
                    INSERT INTO merged_records(dataset_id, uri, survivor, stamp, state, remade)
                    VALUES (\(dataset), \(loser), \(merged.survivor), \(merged.stamp.description),
                            \(merged.state.map { ByteBuffer(bytes: $0.binaryBytes()) }), \(merged.remade?.description))
                    ON CONFLICT (dataset_id, uri) DO UPDATE
                    SET survivor = EXCLUDED.survivor, stamp = EXCLUDED.stamp, state = EXCLUDED.state, remade = EXCLUDED.remade
                    """, logger: logger)
            } else {
                try await connection.query("DELETE FROM merged_records WHERE dataset_id = \(dataset) AND uri = \(loser)", logger: logger)
            }
        }
    }

    /// Keeps the log entries for ``finish(_:records:answers:announce:connection:logger:)``: nothing in a push
    /// reads the log, and they ride in its last statement.
    private mutating func writeLog(_ log: [LogWrite]) {
        guard let last = log.last else { return }
        pendingLog += log
        head = last.position
        loggedBytes += log.reduce(0) { $0 + Int64($1.json.count) }
    }

    /// Keeps the lost values for ``finish(_:records:answers:announce:connection:logger:)``.
    private mutating func writeLost(_ lost: [LostWrite]) {
        guard !lost.isEmpty else { return }
        let values = lost.map { write in ByteBuffer(data: WireJSON.data { $0.append(write.lost) }) }
        pendingLost += zip(lost, values).map { ($0, $1) }
        loggedBytes += values.reduce(0) { $0 + Int64($1.readableBytes) }
    }

    /// The last statement of a batch of pushes: their log entries and lost values, the
    /// dataset's new head and stored bytes, and each push's answer under its idempotency
    /// key, in one round trip.
    static func finish(
        _ stores: [PostgresPushStore], records: BatchRecords? = nil, answers: [Answer], announce: (channel: String, node: String)? = nil, connection: PostgresConnection,
        logger: Logger
    ) async throws {
        guard let first = stores.first, let last = stores.last else { return }
        let dataset = first.dataset
        let log = stores.flatMap(\.pendingLog)
        let lost = stores.flatMap(\.pendingLost)
        let bytes = stores.reduce(0) { $0 + $1.loggedBytes }
        let writes = (records?.order ?? []).map { uri in (uri: uri, write: records!.records[uri]!) }
        let made = writes.filter(\.write.isNew)
        let changed = writes.filter { !$0.write.isNew }
        // Positions start at 1: 0 stands for none (arrays of this driver hold no NULL). The
        // answers are stored only when every record the batch made was new (else no row:
        // the batch is undone and runs again push by push).
        let stored = try await connection.query(
            """
            WITH made AS (
                INSERT INTO records(dataset_id, uri, state)
                SELECT \(dataset), * FROM unnest(\(made.map(\.uri))::text[], \(made.map { ByteBuffer(bytes: $0.write.state) })::bytea[])
                ON CONFLICT (dataset_id, uri) DO NOTHING RETURNING 1),
            changed AS (
                INSERT INTO records(dataset_id, uri, state)
                SELECT \(dataset), * FROM unnest(\(changed.map(\.uri))::text[], \(changed.map { ByteBuffer(bytes: $0.write.state) })::bytea[])
                ON CONFLICT (dataset_id, uri) DO UPDATE SET state = EXCLUDED.state),
            logged AS (
                INSERT INTO log(dataset_id, position, schema_version, change)
                SELECT \(dataset), * FROM unnest(\(log.map(\.position))::bigint[], \(log.map { Int64($0.schemaVersion) })::bigint[],
                                                \(log.map { ByteBuffer(bytes: $0.json) })::bytea[])),
            lost AS (
                INSERT INTO lost_values(dataset_id, uri, position, lost, at)
                SELECT \(dataset), u, NULLIF(p, 0), l, a
                FROM unnest(\(lost.map(\.write.record))::text[], \(lost.map { $0.write.position ?? 0 })::bigint[],
                            \(lost.map(\.json))::bytea[], \(lost.map(\.write.at))::bigint[]) AS t(u, p, l, a)),
            moved AS (UPDATE datasets SET log_head = \(last.head), stored_bytes = stored_bytes + \(bytes) WHERE id = \(dataset)),
            announced AS (SELECT pg_notify(\(announce?.channel ?? ""), \(announce.map { "\(dataset) \($0.node)" } ?? "")) WHERE \(announce != nil))
            INSERT INTO idempotency(dataset_id, key, request_hash, response, created_at)
            SELECT \(dataset), * FROM unnest(\(answers.map(\.key))::text[], \(answers.map(\.requestHash))::text[],
                                            \(answers.map { ByteBuffer(data: $0.response) })::bytea[], \(answers.map(\.now))::bigint[])
            WHERE (SELECT COUNT(*) FROM made) = \(Int64(made.count)) AND (SELECT COUNT(*) FROM announced) >= 0
            RETURNING 1
            """, logger: logger
        ).collect().count
        guard stored == answers.count else {
            throw StorageError.conflict("a record the batch made was there already; the batch runs again push by push")
        }
    }

    /// A push's answer, stored under its key by ``finish(_:records:answers:announce:connection:logger:)``.
    struct Answer {
        var key: String
        var requestHash: String
        var response: Data
        var now: Int64
    }
}

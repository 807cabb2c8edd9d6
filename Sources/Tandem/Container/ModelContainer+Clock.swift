import Foundation
import GRDB

/// The store's clock: what it learned of its sync server's time, its latest HLC stamp, and
/// the repair of stamps made while the machine's clock ran ahead.
extension ModelContainer {
    /// This store's HLC node id, read when the store was opened: the stamps it issues carry
    /// it (the sync engine tells its own stamps from others' by it).
    package var hlcNode: UInt64 { journal.node }

    /// Remembers the sync server's time (`serverMilliseconds`, read from one of its answers
    /// just now), so the journal stamps with the server's time from now on (see
    /// ``ServerClockReading``). Written only when the estimate it replaces is off by more
    /// than a quarter of a second, or the wall clock moved by more than a second against it
    /// (set right, say: the reading's offset, which `tandem status` shows, is then stale), so
    /// a sync that finds the clocks agreeing writes nothing.
    /// Returns the reading in force.
    ///
    /// ```swift
    /// let reading = try container.recordServerTime(serverTimeHeader)
    /// print(reading.offset)   // the server's clock minus this machine's, ms
    /// ```
    ///
    /// - Throws: ``StoreError`` when the store cannot be written.
    ///
    /// `roundTripMilliseconds`: how long the exchange the time came from took. The server's
    /// time is matched with the middle of it, give or take half of it (the reading's
    /// ``ServerClockReading/uncertainty``, which keeps a right wall clock stamping within
    /// it). A reading from an exchange slower than a second does not replace one at least as
    /// sure unless the clocks are more than a minute apart (then a second does not matter, and
    /// the reading is what keeps edits from being refused or lost); a surer reading replaces
    /// a less sure one.
    @discardableResult
    public func recordServerTime(_ serverMilliseconds: Int64, roundTripMilliseconds: Int64 = 0) throws -> ServerClockReading {
        let clock = journal.clock
        let half = max(0, roundTripMilliseconds) / 2
        var boot = clock.monotonic?()
        boot?.milliseconds -= half
        let reading = ServerClockReading(
            serverMilliseconds: serverMilliseconds, wallMilliseconds: clock.milliseconds - half, boot: boot, uncertainty: half)
        if roundTripMilliseconds > 1_000, abs(reading.offset) < 60_000, let known = try serverClock(), known.uncertainty <= half { return known }
        if let known = try serverClock(),
            abs(known.estimate(wall: reading.wallMilliseconds, boot: reading.boot) - serverMilliseconds) <= 250,
            known.boot?.bootID == reading.boot?.bootID, abs(known.offset - reading.offset) <= 1_000,
            known.uncertainty <= half + 100
        {
            return known
        }
        try StoreErrorMapping.map {
            try writer.write { db in try StoreFile.setMetadata("serverClock", reading.text, db) }
        }
        return reading
    }

    /// Columns that had other names before a migration renamed them: entity → former name →
    /// the name the column syncs under (its attribute's first name, with a composite leaf's
    /// path). Journaled edits not pushed yet still name them so.
    public func formerColumnNames() throws -> [String: [String: String]] {
        try StoreErrorMapping.map { try writer.read { db in try Migrator.formerColumnNames(db) } }
    }

    /// The sync server's time as the store last learned it (`nil`: never synced).
    public func serverClock() throws -> ServerClockReading? {
        try StoreErrorMapping.map {
            try writer.read { db in
                try String.fetchOne(db, sql: "SELECT value FROM tandem_metadata WHERE key = 'serverClock'").flatMap(ServerClockReading.init(text:))
            }
        }
    }

    /// The time the journal stamps with now (ms since 1970): the server's estimated, else
    /// the wall clock.
    public func stampingTime() throws -> Int64 {
        Journal.now(journal.clock, server: try serverClock())
    }

    /// The store's latest HLC stamp (issued or received), `nil` before the first write.
    public func latestStamp() throws -> HLCTimestamp? {
        try StoreErrorMapping.map {
            try writer.read { db in
                try String.fetchOne(db, sql: "SELECT value FROM tandem_metadata WHERE key = 'hlc'").flatMap { HLCTimestamp($0) }
            }
        }
    }

    /// A new HLC stamp from the store's clock (after every stamp issued or received), kept as
    /// the store's latest: for a change made outside the journal, like a sync's announcement
    /// of a merge.
    ///
    /// ```swift
    /// let stamp = try container.nextStamp()
    /// ```
    public func nextStamp() throws -> HLCTimestamp {
        let journal = self.journal
        return try StoreErrorMapping.map {
            try writer.write { db in
                let stamp = try Journal.tick(db, journal: journal)
                try StoreFile.advanceClock(past: stamp, db)
                return stamp
            }
        }
    }

    /// Stamps again, below `ceiling`, every stamp above it in the history after
    /// `acknowledged` and in the records: what a machine whose clock ran ahead wrote and a
    /// sync server refused (`clock_skew`). The new stamps keep the old ones' order and sort
    /// after every stamp kept (so no earlier edit overtakes a later one), after every stamp
    /// received from a sync (HLC receive) and after the server's time as the store knows it;
    /// the store's HLC moves back to the last of them.
    /// Nothing else changes: values, tokens and the journal's entries stay. `including`
    /// names stamps kept outside the store's tables (a sync's quarantine of refused
    /// changes) to stamp again in the same order. Returns each replaced stamp's new one.
    ///
    /// ```swift
    /// let ceiling = HLCTimestamp(physical: UInt64(serverTime + maxSkew), counter: .max, node: .max)
    /// let replaced = try container.restampLocalChanges(above: ceiling, after: acknowledged)
    /// ```
    ///
    /// Only stamps this store made can be above what the server accepts (the server accepted
    /// every stamp it sent), so the history it already pushed is left as it was.
    ///
    /// - Throws: ``StoreError`` when the store cannot be read or written.
    @discardableResult
    public func restampLocalChanges(
        above ceiling: HLCTimestamp, after acknowledged: HistoryToken,
        including extra: Set<HLCTimestamp> = []
    ) throws -> [HLCTimestamp: HLCTimestamp] {
        let limit = ceiling.description
        let node = journal.node
        let server = try serverClock()
        let clock = journal.clock
        return try StoreErrorMapping.map {
            try writer.write { db in
                var bad = Set(extra.map(\.description).filter { $0 > limit })
                var kept = HLCTimestamp(physical: UInt64(max(0, Journal.now(clock, server: server))), counter: 0, node: node)
                func see(_ text: String) {
                    if text > limit { bad.insert(text) } else if let stamp = HLCTimestamp(text), stamp > kept { kept = stamp }
                }
                // Stamps received (a pulled delete is in no row) stay below the new ones.
                if let received = try String.fetchOne(db, sql: "SELECT value FROM tandem_metadata WHERE key = 'received'") {
                    see(received)
                }
                // Stamps already pushed (links, deletes: in no row) stay below the new ones.
                if let pushed = try String.fetchOne(db, sql: "SELECT max(stamp) FROM tandem_history_transaction WHERE stamp <= ?", arguments: [limit]) {
                    see(pushed)
                }
                let transactions = try Row.fetchAll(db, sql: "SELECT token, stamp FROM tandem_history_transaction WHERE token > ?", arguments: [acknowledged.rawValue])
                for row in transactions { see(row[1]) }
                let changes = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT id, stamps FROM tandem_history_change WHERE stamps IS NOT NULL
                        AND token > ? AND EXISTS (SELECT 1 FROM json_each(stamps) WHERE value > ?)
                        """, arguments: [acknowledged.rawValue, limit])
                var changeStamps: [(Int64, [String: String])] = []
                for row in changes {
                    guard let map = Self.stampMap(row[1]) else { continue }
                    map.values.forEach(see)
                    changeStamps.append((row[0], map))
                }
                var rows: [(table: String, id: String, stamps: [String: String])] = []
                for entity in schema.entities {
                    let table = SQLName.quote(entity.name)
                    if let highest = try String.fetchOne(db, sql: "SELECT max(j.value) FROM \(table), json_each(\(table).\"#hlc\") j WHERE j.value <= ?", arguments: [limit]) {
                        see(highest)
                    }
                    for row in try Row.fetchAll(
                        db,
                        sql: """
                            SELECT "#id", "#hlc" FROM \(table) WHERE EXISTS (SELECT 1 FROM json_each(\(table)."#hlc") WHERE value > ?)
                            """, arguments: [limit])
                    {
                        guard let map = Self.stampMap(row[1]) else { continue }
                        map.values.forEach(see)
                        rows.append((table, row[0], map))
                    }
                }
                guard !bad.isEmpty else {
                    if let last = try String.fetchOne(db, sql: "SELECT value FROM tandem_metadata WHERE key = 'hlc'"), last > limit {
                        try StoreFile.setMetadata("hlc", kept.description, db)
                    }
                    return [:]
                }
                var hlc = HybridLogicalClock(node: node, last: kept)
                var replacement: [String: String] = [:]
                for old in bad.sorted() { replacement[old] = hlc.tick(now: kept.physical).description }
                for row in transactions {
                    let stamp: String = row[1]
                    if let new = replacement[stamp] {
                        try db.execute(sql: "UPDATE tandem_history_transaction SET stamp = ? WHERE token = ?", arguments: [new, row[0] as Int64])
                    }
                }
                for (id, map) in changeStamps {
                    try db.execute(
                        sql: "UPDATE tandem_history_change SET stamps = ? WHERE id = ?",
                        arguments: [Self.stampJSON(map.mapValues { replacement[$0] ?? $0 }), id])
                }
                for row in rows {
                    try db.execute(
                        sql: "UPDATE \(row.table) SET \"#hlc\" = ? WHERE \"#id\" = ?",
                        arguments: [Self.stampJSON(row.stamps.mapValues { replacement[$0] ?? $0 }), row.id])
                }
                try StoreFile.setMetadata("hlc", hlc.last.description, db)
                return Dictionary(
                    uniqueKeysWithValues: replacement.compactMap { old, new in
                        HLCTimestamp(old).flatMap { old in HLCTimestamp(new).map { (old, $0) } }
                    })
            }
        }
    }

    static func stampMap(_ text: String?) -> [String: String]? {
        guard let text else { return nil }
        return try? JSONDecoder().decode([String: String].self, from: Data(text.utf8))
    }

    static func stampJSON(_ map: [String: String]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(map)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}

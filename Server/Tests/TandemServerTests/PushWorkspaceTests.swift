import Foundation
import TandemSchema
@testable import TandemServer
import Testing
import TandemWire

/// A push runs on a ``PushWorkspace``: its storage reads what it names in one batch before it
/// runs and writes what it wrote in one batch after; what it could not name beforehand is read
/// in another round, and nothing of a round that runs again is written. No I/O: the storage
/// here is a dictionary that counts its batches.
@Suite("Push workspace: batch reads, batch writes, rounds")
struct PushWorkspaceTests {
    /// The memory storage's ``PushStore`` on one dataset, counting its batches.
    struct CountingStore: PushStore {
        var base = MemoryServerStorage.PushStore(
            dataset: MemoryServerStorage.Dataset(id: 1, owner: 1, info: DatasetInfo(name: "todos", createdAt: 0, schemaVersion: 1)), log: [])
        var reads = 0
        var writes = 0
        /// Planted: refuses every write of record `uri` even once it was read.
        var alwaysRefuse: String?

        init(records: [String: RecordState] = [:], unique: [UniqueSlot: String] = [:], alwaysRefuse: String? = nil) {
            base.dataset.records = records
            base.dataset.unique = unique
            self.alwaysRefuse = alwaysRefuse
        }

        var records: [String: RecordState] { base.dataset.records }
        var unique: [UniqueSlot: String] { base.dataset.unique }
        var log: [LogEntry] { base.log }

        func lastLogPosition() -> Int64 { base.lastLogPosition() }
        func tombstonesBefore() -> Int64 { base.tombstonesBefore() }

        mutating func read(_ keys: PushKeys) -> PushReads {
            reads += 1
            return base.read(keys)
        }

        mutating func write(_ batch: PushWrites) throws -> PushKeys {
            writes += 1
            if let alwaysRefuse, batch.records.contains(where: { $0.uri == alwaysRefuse }) {
                var refused = PushKeys()
                refused.records.insert(alwaysRefuse)
                return refused
            }
            return try base.write(batch)
        }
    }

    static let stamp = HLCTimestamp(physical: 1_800_000_000_000, counter: 0, node: 7)
    static func state(_ title: String) -> RecordState {
        RecordState(newRecord: "Todo", values: ["title": .text(title)], stamps: [:], created: stamp)
    }

    /// Inserts `a` unread: `"new"` when it was written as new, else the stored title.
    static let insertA = PushJob { workspace in
        let made = workspace.insertNewRecord("a", entity: "Todo", values: ["title": .text("mine")], stamps: [:], created: stamp)
        _ = workspace.appendLog(ServerHarness.insert("todos", 1), schemaVersion: 1)
        if made { return Data("new".utf8) }
        guard case .text(let title)? = try workspace.record("a")?.fields["title"]?.value else { return Data("none".utf8) }
        return Data(title.utf8)
    }

    @Test func anInsertOfARecordTheStorageHasRunsAgainWithItReadAndWritesNothingOfTheFirstRound() throws {
        var store = CountingStore(records: ["a": Self.state("theirs")])
        let answer = try PushWorkspace.perform(Self.insertA, on: &store)
        #expect(String(decoding: answer, as: UTF8.self) == "theirs")
        #expect(store.writes == 2 && store.reads == 2, "one refused write, then the record read and the push run again")
        #expect(store.records["a"] == Self.state("theirs"), "the stored record is not overwritten by the refused insert")
        #expect(store.log.map(\.position) == [1], "the first round's log entry is not written")
    }

    @Test func anInsertOfANewRecordIsWrittenInOneRoundWithoutReadingIt() throws {
        var store = CountingStore()
        let answer = try PushWorkspace.perform(Self.insertA, on: &store)
        #expect(String(decoding: answer, as: UTF8.self) == "new")
        #expect(store.writes == 1 && store.reads == 1, "one (empty) batch read, one batch write")
        #expect(store.records["a"]?.fields["title"]?.value == .text("mine"))
    }

    @Test func aReadOfWhatWasNotNamedIsAMissThatRunsThePushAgainWithItRead() throws {
        var store = CountingStore(records: ["b": Self.state("b's")])
        var seen: [String] = []
        let job = PushJob { workspace in
            guard let state = try workspace.record("b") else { throw PushRefusal(code: "planted", message: "b is missing") }
            workspace.setRecord("b", state)
            return Data()
        }
        _ = try PushWorkspace.perform(job, on: &store)
        seen.append(contentsOf: store.records.keys)
        #expect(store.reads == 2 && store.writes == 1, "the round that missed b wrote nothing; its error was not the push's")
        #expect(seen == ["b"])
    }

    @Test func aRefusalOfARoundWithoutMissesIsThePushs() throws {
        var store = CountingStore(records: ["b": Self.state("b's")])
        var keys = PushKeys()
        keys.records.insert("b")
        let job = PushJob(reads: keys) { _ in throw PushRefusal.wrongEntity(record: "b", stored: "Todo", sent: "Tag") }
        #expect(throws: PushRefusal.wrongEntity(record: "b", stored: "Todo", sent: "Tag")) { try PushWorkspace.perform(job, on: &store) }
        #expect(store.writes == 0)
    }

    @Test func aClaimOfAValueAnotherRecordHoldsRunsAgainAndSeesTheHolder() throws {
        let slot = UniqueSlot(entity: "Todo", key: "title=\"x\"")
        var store = CountingStore(unique: [slot: "c"])
        let job = PushJob { workspace in
            Data((workspace.claimUnique(entity: "Todo", key: slot.key, record: "d") ?? "claimed").utf8)
        }
        let answer = try PushWorkspace.perform(job, on: &store)
        #expect(String(decoding: answer, as: UTF8.self) == "c")
        #expect(store.unique[slot] == "c")
        #expect(store.writes == 2)
    }

    @Test func aReleaseOfAValueNotReadFreesItOnlyWhenTheRecordHoldsIt() throws {
        let (held, other) = (UniqueSlot(entity: "Todo", key: "k1"), UniqueSlot(entity: "Todo", key: "k2"))
        var store = CountingStore(unique: [held: "e", other: "f"])
        let job = PushJob { workspace in
            workspace.releaseUnique(entity: "Todo", key: "k1", record: "e")
            workspace.releaseUnique(entity: "Todo", key: "k2", record: "e")
            return Data()
        }
        _ = try PushWorkspace.perform(job, on: &store)
        #expect(store.unique == [other: "f"])
        #expect(store.writes == 1)
    }

    @Test func aStorageThatRefusesWhatItReadIsAnErrorNotAnEndlessPush() throws {
        var store = CountingStore(records: ["a": Self.state("theirs")], alwaysRefuse: "a")
        let job = PushJob { workspace in
            workspace.setRecord("a", try workspace.record("a") ?? Self.state("mine"))
            return Data()
        }
        #expect(throws: StorageError.self) { try PushWorkspace.perform(job, on: &store) }
        #expect(store.reads == 2 && store.writes == 1, "a miss, then one refused write of what was read")
    }

    /// The reads a plan names cover an update, a link and a delete of records the server
    /// has: each push runs in one round; a unique collision runs in two.
    @Test func pushesOfKnownRecordsRunInOneRoundAndAUniqueCollisionInTwo() throws {
        var schema = LinkSettleTests.schema
        schema.entities[0].attributes[0].options = [.unique]
        let plan = PushPlan(schema: schema, datasetName: "todos")
        let processor = PushProcessor(datasetName: "todos", cursorScope: Cursor.Scope(epoch: 1, tag: 1), schemaVersion: 1, schema: schema, now: 1_800_000_000_000, maxClockSkew: 60_000)
        var store = CountingStore()
        func push(_ sent: WireChange) throws -> [Int] {
            let (changes, stamps) = try processor.validate([sent])
            let (reads, writes) = (store.reads, store.writes)
            _ = try PushWorkspace.perform(
                PushJob(reads: plan.reads(for: changes)) { workspace in
                    try JSONEncoder().encode(processor.apply(changes, stamps: stamps, plan: plan, to: &workspace).response)
                }, on: &store)
            return [store.reads - reads, store.writes - writes]
        }
        func at(_ millisecond: UInt64) -> String { ServerHarness.stamp(1_800_000_000_000 + millisecond) }
        let tag = LinkSettleTests.tag
        #expect(try push(UniqueMergeTests.insert(1, title: "x", name: "Ann", at: at(0))) == [1, 1])
        #expect(try push(WireChange(record: tag, entity: "Tag", kind: .insert, values: ["label": .text("home")], stamps: ["*": at(0)])) == [1, 1])
        #expect(try push(UniqueMergeTests.update(1, ["rank": .integer(2)], at: at(1))) == [1, 1])
        #expect(try push(WireChange(record: tag, entity: "Tag", kind: .link, values: ["todos": .text(LinkSettleTests.todoID)], stamps: ["*": at(2)])) == [1, 1])
        // Rounds: the claim of x refused; x's holder read; the loser's link owners read.
        let collision = try push(UniqueMergeTests.insert(2, title: "x", name: "Bob", at: at(3)))
        #expect(collision == [4, 2], "the claim of x is refused once, and the merge reads what it depends on")
        #expect(store.records[ServerHarness.uri("todos", 2)]?.isDeleted == true, "the newer record was merged into the older")
        #expect(try push(WireChange(record: ServerHarness.uri("todos", 1), entity: "Todo", kind: .delete, stamps: ["*": at(4)])) == [1, 1])
        #expect(store.log.count == 9, "inserts, update, link, insert, the merge's update and delete, the delete, the link's unlink")
    }
}

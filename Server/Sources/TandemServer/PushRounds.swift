public import Foundation

/// The rounds of one push as a state machine with no I/O: which keys to read, what to write,
/// and when the push is done. ``PushWorkspace/perform(_:on:)`` drives it on a storage that
/// answers at once (SQLite), ``PushWorkspace/perform(_:onAsync:)`` on one that answers over
/// a network (PostgreSQL); both run the same rounds.
///
/// A round reads what the push names, runs the push on a ``PushWorkspace`` holding it, and
/// writes what it wrote in one batch. When the push read what was not read for it (a miss),
/// or the storage refused a write resting on what was not read (a new record that exists, a
/// claimed value another record holds), it runs again from the start with that read too;
/// nothing of a round that runs again is written.
///
/// ```swift
/// var rounds = PushRounds(job: job, lastPosition: 41)
/// var step = rounds.start()
/// while true {
///     switch step {
///     case .read(let keys): step = try rounds.read(store.read(keys))
///     case .write(let writes): step = try rounds.wrote(refused: store.write(writes))
///     case .done(let answer): return answer
///     }
/// }
/// ```
public struct PushRounds {
    /// What the storage does next.
    public enum Step {
        /// Read these keys and hand the answer to ``PushRounds/read(_:)``.
        case read(PushKeys)
        /// Write these, all or nothing, and hand what was refused to ``PushRounds/wrote(refused:)``.
        case write(PushWrites)
        /// The push is done: its answer.
        case done(Data)
    }

    /// The most rounds a push runs: each round reads at least one key the earlier ones did
    /// not, so a push ends; this bound only stops a storage that answers wrongly.
    static let maxRounds = 1_000

    private let job: PushJob
    private let lastPosition: Int64
    private var keys: PushKeys
    private var reads = PushReads()
    /// The keys asked for and not yet answered.
    private var asked = PushKeys()
    private var answer: Data?
    private var rounds = 0

    /// The rounds of `job` on a dataset whose log ends at `lastPosition`.
    public init(job: PushJob, lastPosition: Int64, tombstonesBefore: Int64 = 0) {
        reads.tombstonesBefore = tombstonesBefore
        self.job = job
        self.lastPosition = lastPosition
        keys = PushKeys()
    }

    /// The first step: read what the job names.
    public mutating func start() -> Step {
        asked = job.reads
        return .read(asked)
    }

    /// Takes the storage's answer to the last ``Step/read(_:)`` and runs a round.
    ///
    /// - Throws: what the job throws in a round without misses (a ``PushRefusal``), and
    ///   ``StorageError/unavailable(_:)`` after ``maxRounds`` rounds.
    public mutating func read(_ answered: PushReads) throws -> Step {
        reads.records.merge(answered.records) { $1 }
        reads.merged.merge(answered.merged) { $1 }
        reads.linkOwners.merge(answered.linkOwners) { $1 }
        reads.unique.merge(answered.unique) { $1 }
        reads.tombstonesBefore = max(reads.tombstonesBefore, answered.tombstonesBefore)
        keys.formUnion(asked)
        rounds += 1
        guard rounds <= Self.maxRounds else { throw StorageError.unavailable("a push needed more than \(Self.maxRounds) rounds of reads") }
        var workspace = PushWorkspace(lastPosition: lastPosition, keys: keys, reads: reads, capacity: job.changes)
        let result: Data?
        do {
            result = try job.run(&workspace)
        } catch {
            // A round with misses decided on absent values: its error may be theirs.
            guard !workspace.misses.isEmpty else { throw error }
            result = nil
        }
        guard workspace.misses.isEmpty, let result else {
            asked = workspace.misses
            return .read(asked)
        }
        answer = result
        return .write(workspace.writes())
    }

    /// Takes what the storage refused of the last ``Step/write(_:)`` (nothing: it wrote
    /// everything).
    ///
    /// - Throws: ``StorageError/unavailable(_:)`` when the storage refused writes for values
    ///   it had read (it would refuse them forever).
    public mutating func wrote(refused: PushKeys) throws -> Step {
        if refused.isEmpty, let answer { return .done(answer) }
        guard !keys.contains(refused) else {
            throw StorageError.unavailable("the storage refused a push's writes for values it had read: \(refused)")
        }
        answer = nil
        asked = refused
        return .read(asked)
    }
}

extension PushKeys {
    /// Whether every key of `other` is among these.
    func contains(_ other: PushKeys) -> Bool {
        other.records.isSubset(of: records) && other.merged.isSubset(of: merged) && other.linkOwners.isSubset(of: linkOwners)
            && other.unique.isSubset(of: unique)
    }
}

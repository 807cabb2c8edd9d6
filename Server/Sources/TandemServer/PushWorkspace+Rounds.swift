public import Foundation

extension PushWorkspace {
    /// The most rounds a push runs: each round reads at least one key the earlier ones did
    /// not, so a push ends; this bound only stops a storage that answers wrongly.
    static let maxRounds = 1_000

    /// Runs `job` on `store`: reads what it names in one batch, runs it on a workspace, and
    /// writes what it wrote in one batch. When the push read what was not read for it (a
    /// miss), or the storage refused a write resting on what was not read (a new record that
    /// exists, a claimed value another record holds), it runs again from the start with that
    /// read too; nothing of a round that runs again is written.
    ///
    /// ```swift
    /// var store = SQLitePushStore(db: db, dataset: id)
    /// let answer = try PushWorkspace.perform(job, on: &store)
    /// ```
    ///
    /// - Throws: what `job` throws in a round without misses (a ``PushRefusal``), the
    ///   storage's errors, and ``StorageError/unavailable(_:)`` when the storage keeps
    ///   refusing what it was asked to read.
    public static func perform(_ job: PushJob, on store: inout some PushStore) throws -> Data {
        let lastPosition = try store.lastLogPosition()
        var keys = job.reads
        var reads = try store.read(keys)
        for _ in 0..<maxRounds {
            var workspace = PushWorkspace(lastPosition: lastPosition, keys: keys, reads: reads, capacity: job.changes)
            let answer: Data?
            do {
                answer = try job.run(&workspace)
            } catch {
                // A round with misses decided on absent values: its error may be theirs.
                guard !workspace.misses.isEmpty else { throw error }
                answer = nil
            }
            var more = workspace.misses
            if more.isEmpty, let answer {
                more = try store.write(workspace.writes())
                if more.isEmpty { return answer }
                guard !keys.contains(more) else {
                    throw StorageError.unavailable("the storage refused a push's writes for values it had read: \(more)")
                }
            }
            try read(more, from: &store, into: &reads, keys: &keys)
        }
        throw StorageError.unavailable("a push needed more than \(maxRounds) rounds of reads")
    }

    private static func read(_ more: PushKeys, from store: inout some PushStore, into reads: inout PushReads, keys: inout PushKeys) throws {
        let answered = try store.read(more)
        reads.records.merge(answered.records) { $1 }
        reads.merged.merge(answered.merged) { $1 }
        reads.linkOwners.merge(answered.linkOwners) { $1 }
        reads.unique.merge(answered.unique) { $1 }
        keys.formUnion(more)
    }
}

extension PushKeys {
    /// Whether every key of `other` is among these.
    func contains(_ other: PushKeys) -> Bool {
        other.records.isSubset(of: records) && other.merged.isSubset(of: merged) && other.linkOwners.isSubset(of: linkOwners)
            && other.unique.isSubset(of: unique)
    }
}

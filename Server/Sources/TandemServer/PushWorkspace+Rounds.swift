public import Foundation

extension PushWorkspace {
    /// Runs `job` on `store` (``PushRounds``): reads what it names in one batch, runs it on a
    /// workspace, and writes what it wrote in one batch; again with more read when the push
    /// missed something or the storage refused a write resting on what was not read.
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
        var rounds = PushRounds(job: job, lastPosition: try store.lastLogPosition(), tombstonesBefore: try store.tombstonesBefore())
        var step = rounds.start()
        while true {
            switch step {
            case .read(let keys): step = try rounds.read(store.read(keys))
            case .write(let writes): step = try rounds.wrote(refused: store.write(writes))
            case .done(let answer): return answer
            }
        }
    }

    /// ``perform(_:on:)`` on a storage that answers over a network: the same rounds, each
    /// read and write one batch of queries.
    ///
    /// ```swift
    /// var store = PostgresPushStore(connection: connection, dataset: id, lastPosition: head)
    /// let answer = try await PushWorkspace.perform(job, onAsync: &store)
    /// ```
    ///
    /// - Throws: as ``perform(_:on:)``.
    public static func perform(_ job: PushJob, onAsync store: inout some AsyncPushStore) async throws -> Data {
        var rounds = PushRounds(job: job, lastPosition: store.lastLogPosition, tombstonesBefore: store.tombstonesBefore)
        var step = rounds.start()
        while true {
            switch step {
            case .read(let keys): step = try rounds.read(await store.read(keys))
            case .write(let writes): step = try rounds.wrote(refused: await store.write(writes))
            case .done(let answer): return answer
            }
        }
    }
}

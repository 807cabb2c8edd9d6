import Foundation
import GRDB
import Tandem
import TandemSchema
import TandemWire

extension SyncEngine {
    /// A pushed batch whose log entries the server reported as its own (``PushEcho``), and
    /// what pulling them back would still have done.
    struct Echo: Sendable {
        var from: String
        var to: String
        /// Records of referenced entities the batch inserted: pulling the insert back clears
        /// their tombstones.
        var inserted: [(entity: String, id: String)]
    }

    /// The echo of a pushed batch, when skipping it can be decided at the answer: `nil` when
    /// the server sent none, or when the batch deletes a record of a referenced entity
    /// (pulling that delete back looks for records still pointing at it, for its delete rule).
    func echo(of batch: [WireChange], answer: PushResponse) -> Echo? {
        guard let echo = answer.echo else { return nil }
        let referenced = ChangeApplier.referencedEntities(in: container.schema)
        var inserted: [(entity: String, id: String)] = []
        for change in batch where referenced.contains(change.entity) {
            guard change.kind != .delete, let uri = RecordURI(change.record) else { return nil }
            if change.kind == .insert { inserted.append((change.entity, uri.id)) }
        }
        return Echo(from: echo.from, to: echo.to, inserted: inserted)
    }

    /// Moves the pull cursor past pushed batches' own log entries instead of pulling them
    /// back, when that pull would change nothing; runs in the transaction that saves the
    /// push's progress. Returns how many batches it skipped, and the echoes that still wait
    /// for an earlier one (with several pushes in flight, the server may log a later batch
    /// first): pass them again with the next answers.
    ///
    /// An echo is skipped when:
    /// - the cursor is its `from` (the store has pulled everything before it; echoes chain
    ///   in log order, whatever order their answers came in);
    /// - no pulled change was applied since the range's first transaction `first`. Before
    ///   it, every pulled value is older than the pushed ones (HLC receive), so the rows
    ///   still hold what was pushed. After it, a pulled delete and re-insert may have
    ///   replaced a pushed record, and pulling the push back is what restores its values.
    ///
    /// ```swift
    /// let (skipped, waiting) = try store { db in try Self.skipEchoes(answered.echoes, since: range.firstToken, db) }
    /// ```
    static func skipEchoes(
        _ echoes: [Echo], since first: HistoryToken, checkingPulledChanges: Bool = true,
        _ db: Database
    ) throws -> (skipped: Int, waiting: [Echo]) {
        guard !echoes.isEmpty else { return (0, []) }
        if checkingPulledChanges, try SyncJournal.hasTransaction(by: SyncStore.author, since: first, db) { return (0, []) }
        var cursor = try SyncState.read(db)?.cursor ?? ""
        var waiting = echoes
        var skipped = 0
        while let index = waiting.firstIndex(where: { $0.from == cursor }) {
            let echo = waiting.remove(at: index)
            for record in echo.inserted {
                try SyncStore.setTombstone(false, entity: record.entity, id: record.id, db)
            }
            cursor = echo.to
            skipped += 1
        }
        if skipped > 0 { try SyncState.update(db) { $0.cursor = cursor } }
        return (skipped, waiting)
    }
}

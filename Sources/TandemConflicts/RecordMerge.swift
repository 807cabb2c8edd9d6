public import TandemSchema
public import TandemWire

/// The conflict model, applied to one change against one record (no I/O): per-field
/// last-writer-wins by HLC stamp, and a delete wins over concurrent updates.
///
/// The state is a function of the set of changes received, whatever their order, so every
/// replica and the server converge:
/// - `created` is the newest insert's creation stamp (its `"*"` when given, else its newest
///   value's), `deleted` the newest delete stamp; the record is
///   deleted while `deleted` is newer than `created` (an insert newer than the delete brings
///   it back: delete, then re-insert).
/// - A delete removes every value written before it; a value stamped before the newest delete
///   loses to it. An insert or update value newer than the field's is kept; an older one loses
///   to the stored value (recorded, with the winner). Equal stamps are the same edit.
/// - While the record is deleted, newer values are kept but not applied: they lose to the
///   delete (delete wins over concurrent updates), and come back only with a newer insert.
/// - A delete older than the newest insert still removes what was written before it, but the
///   record stays: the delete is reported as lost to the insert.
///
/// ```swift
/// var state: RecordState? = nil
/// let merged = RecordMerge.apply(change, stamps: parsed, to: &state)
/// merged.applied   // ["title"]; merged.lost: values that lost
/// ```
public enum RecordMerge {
    public struct Result: Sendable, Hashable {
        /// What was applied, column by column (`"*"` for a delete), with its stamp.
        public var applied: [String: RecordState.Field] = [:]
        public var lost: [LostValue] = []
        /// A delete lost to a newer insert: replicas that already applied the delete locally
        /// need the whole record back, so the log gets it as an insert.
        public var restore: [String: RecordState.Field]?
    }

    /// Applies `change` (its stamps already parsed and matching its values) to `state`;
    /// `state` is `nil` for a record the server has never seen.
    ///
    /// `incomingWins` is ``ColumnMerge/incomingWins(_:over:)``; tests plant another to show
    /// that the merge laws' property tests catch it.
    ///
    /// `created` is an insert's creation stamp when the change says it (a pushed insert's
    /// `"*"`): an insert the server refused, sent again with a later edit's value, is as old
    /// as its making, not as that edit. Without it, the newest value's stamp dates the insert.
    public static func apply(
        _ change: WireChange, stamps: [String: HLCTimestamp], created creation: HLCTimestamp? = nil, to state: inout RecordState?,
        incomingWins: (HLCTimestamp, HLCTimestamp) -> Bool = ColumnMerge.incomingWins
    ) -> Result {
        var result = Result()
        var record = state ?? RecordState(entity: change.entity)
        switch change.kind {
        case .delete:
            guard let stamp = stamps[WireChange.deleteStampKey] else { return result }
            applyDelete(stamped: stamp, to: &record, &result)
        case .link, .unlink:
            // Merged as an update of its field (PushProcessor does so); alone, it changes nothing.
            return result
        case .insert, .update:
            let wasDeleted = state?.isDeleted ?? false
            if change.kind == .insert, let newest = creation ?? change.values.keys.compactMap({ stamps[$0] }).max(),
                record.created.map({ newest > $0 }) ?? true
            {
                record.created = newest
            }
            let deleted = record.isDeleted
            for (column, value) in change.values.sorted(by: { $0.key < $1.key }) {
                guard let stamp = stamps[column] else { continue }
                switch merge(value, stamped: stamp, into: column, of: record, incomingWins: incomingWins) {
                case .loses(let lost): result.lost.append(lost)
                case .changesNothing: break
                case .wins:
                    let field = RecordState.Field(value: value, stamp: stamp)
                    record.fields[column] = field
                    if deleted {
                        result.lost.append(
                            LostValue(
                                attribute: column, value: value, stamp: stamp.description,
                                winningValue: .null, winningStamp: record.deleted?.description ?? "", toDelete: true))
                    } else {
                        result.applied[column] = field
                    }
                }
            }
            // A re-insert brings the record back with every value newer than the delete,
            // not only its own: replicas that applied the delete get the whole record.
            if wasDeleted && !record.isDeleted {
                result.applied = record.values
            }
        }
        state = record
        return result
    }

    /// A delete stamped `stamp` merged into `record`: an older one than the recorded delete
    /// changes nothing, but if the record lives again (re-inserted after both), the replica
    /// that sent it deleted its copy and needs the record back (`restore`); so does a delete
    /// older than the record's creation.
    static func applyDelete(stamped stamp: HLCTimestamp, to record: inout RecordState, _ result: inout Result) {
        func losesToCreation(_ created: HLCTimestamp) {
            result.lost.append(
                LostValue(
                    attribute: WireChange.deleteStampKey, value: .null, stamp: stamp.description,
                    winningValue: .null, winningStamp: created.description))
            result.restore = record.values
        }
        if let deleted = record.deleted, deleted >= stamp {
            if !record.isDeleted, let created = record.created, created > stamp { losesToCreation(created) }
            return
        }
        record.deleted = stamp
        record.fields = record.fields.filter { $0.value.stamp > stamp }
        if let created = record.created, created > stamp {
            losesToCreation(created)
        } else {
            result.applied[WireChange.deleteStampKey] = RecordState.Field(value: .null, stamp: stamp)
        }
    }

    /// What one incoming value does to its column.
    enum ColumnOutcome {
        /// It wins: the caller writes it.
        case wins
        /// It changes nothing and lost nothing worth reporting (the same value again, or
        /// under an older stamp).
        case changesNothing
        /// It loses to a newer value, to a tie (``ColumnMerge/winsTie(_:over:)``) or to a
        /// newer delete.
        case loses(LostValue)
    }

    /// What `value`, stamped `stamp`, does to `column` of `record`.
    static func merge(
        _ value: WireValue, stamped stamp: HLCTimestamp, into column: String, of record: RecordState,
        incomingWins: (HLCTimestamp, HLCTimestamp) -> Bool
    ) -> ColumnOutcome {
        // The same value written again after the newest delete (elsewhere): this one loses
        // nothing. A link older than its owner's delete meeting the same link made after it:
        // answered lost to the delete, its maker would drop the row the newer one keeps.
        if record.holds(column, value, newerThan: stamp) { return .changesNothing }
        if let delete = record.deleted, stamp <= delete {
            return .loses(
                LostValue(
                    attribute: column, value: value, stamp: stamp.description, winningValue: .null, winningStamp: delete.description, toDelete: true))
        }
        guard let current = record.fields[column] else { return .wins }
        let lost = LostValue(
            attribute: column, value: value, stamp: stamp.description, winningValue: current.value, winningStamp: current.stamp.description)
        if current.stamp == stamp {
            if current.value == value { return .changesNothing }
            return ColumnMerge.winsTie(value, over: current.value) ? .wins : .loses(lost)
        }
        if incomingWins(stamp, current.stamp) { return .wins }
        // The same value under an older stamp lost nothing: not reported.
        return current.value != value ? .loses(lost) : .changesNothing
    }
}

import TandemSchema
import TandemWire

/// The conflict model, applied to one change against one record (no I/O): per-field
/// last-writer-wins by HLC stamp, and a delete wins over concurrent updates.
///
/// - An insert or update value is applied when its stamp is newer than the field's; an older
///   one loses to the stored value (recorded, with the winner). Equal stamps are the same edit.
/// - A delete marks the record deleted; an update of a deleted record loses to the delete.
///   An insert newer than the delete brings the record back (delete, then re-insert).
///
/// ```swift
/// var state: RecordState? = nil
/// let merged = RecordMerge.apply(change, stamps: parsed, to: &state)
/// merged.applied   // ["title"]; merged.lost: values that lost
/// ```
enum RecordMerge {
    struct Result: Sendable, Hashable {
        /// What was applied, column by column (`"*"` for a delete), with its stamp.
        var applied: [String: RecordState.Field] = [:]
        var lost: [LostValue] = []
    }

    /// Applies `change` (its stamps already parsed) to `state`; `state` is `nil` for a record
    /// the server has never seen.
    static func apply(_ change: WireChange, stamps: [String: HLCTimestamp], to state: inout RecordState?) -> Result {
        var result = Result()
        switch change.kind {
        case .delete:
            guard let stamp = stamps[WireChange.deleteStampKey] else { return result }
            var record = state ?? RecordState(entity: change.entity)
            if let deleted = record.deleted, deleted >= stamp { return result }
            record.deleted = stamp
            state = record
            result.applied[WireChange.deleteStampKey] = RecordState.Field(value: .null, stamp: stamp)
        case .insert, .update:
            var record = state ?? RecordState(entity: change.entity)
            if let deleted = record.deleted {
                let newest = stamps.values.max()
                if change.kind == .insert, let newest, newest > deleted {
                    record.deleted = nil  // re-inserted after the delete
                } else {
                    for (column, value) in change.values.sorted(by: { $0.key < $1.key }) {
                        result.lost.append(LostValue(attribute: column, value: value, stamp: stamps[column]?.description ?? "",
                                                     winningValue: .null, winningStamp: deleted.description))
                    }
                    return result
                }
            }
            for (column, value) in change.values.sorted(by: { $0.key < $1.key }) {
                guard let stamp = stamps[column] else { continue }
                if let current = record.fields[column] {
                    if current.stamp == stamp { continue }
                    if current.stamp > stamp {
                        result.lost.append(LostValue(attribute: column, value: value, stamp: stamp.description,
                                                     winningValue: current.value, winningStamp: current.stamp.description))
                        continue
                    }
                }
                let field = RecordState.Field(value: value, stamp: stamp)
                record.fields[column] = field
                result.applied[column] = field
            }
            state = record
        }
        return result
    }
}

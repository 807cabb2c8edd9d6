import Foundation
import Tandem
import TandemWire

/// Turns journal transactions into the changes a push sends, per record: an insert, then its
/// later updates merged into one (the newest value and stamp of each column), a delete
/// replacing the edits before it, a re-insert after a delete kept as its own change.
/// Pure: the same transactions always give the same changes, so a retried range gets the
/// same idempotency keys.
enum PushPlanner {
    struct Plan {
        var changes: [WireChange] = []
        /// Changes the wire protocol cannot carry yet (many-to-many links).
        var unsupported = 0
    }

    static func plan(_ transactions: [HistoryTransaction]) -> Plan {
        var plan = Plan()
        var order: [String] = []
        var segments: [String: [WireChange]] = [:]
        for transaction in transactions {
            for change in transaction.changes {
                let uri = change.persistentModelID.description
                if segments[uri] == nil { order.append(uri) }
                // Mutated in place: a copy taken out and stored back would copy the array
                // on every change.
                segments[uri, default: []].apply(change, uri: uri, unsupported: &plan.unsupported)
            }
        }
        for uri in order { plan.changes += segments[uri] ?? [] }
        return plan
    }

    /// Splits changes into pushes of at most `count` changes and about `bytes` of JSON. A
    /// record's changes (an insert and its updates, a delete and a re-insert) stay in one
    /// push, so pushes sent side by side never touch the same record and the server logs
    /// each record's changes in order.
    static func chunks(_ changes: [WireChange], count: Int, bytes: Int) -> [[WireChange]] {
        var result: [[WireChange]] = []
        var current: [WireChange] = []
        var size = 0
        for change in changes {
            var json = WireJSON()
            json.append(change)
            let length = json.bytes.count + 1
            let sameRecord = current.last?.record == change.record
            if !current.isEmpty && !sameRecord && (current.count >= count || size + length > bytes) {
                result.append(current)
                current = []
                size = 0
            }
            current.append(change)
            size += length
        }
        if !current.isEmpty { result.append(current) }
        return result
    }
}

extension [WireChange] {
    /// Adds one journaled change to a record's pending changes (see ``PushPlanner/plan(_:)``).
    fileprivate mutating func apply(_ change: HistoryChange, uri: String, unsupported: inout Int) {
        switch change.kind {
        case .insert, .update:
            var values: [String: WireValue] = [:]
            var stamps: [String: String] = [:]
            for (column, value) in change.values {
                values[column] = WireValue(value)
                stamps[column] = change.stamp(of: column).description
            }
            // An insert stays its own change, with its own stamps: merging later
            // updates into it would date the record's creation to the newest update,
            // and a delete made in between would no longer win against it.
            let kind: WireChange.Kind = change.kind == .insert ? .insert : .update
            if let tail = last, tail.kind == kind {
                self[count - 1].values.merge(values) { _, new in new }
                self[count - 1].stamps.merge(stamps) { _, new in new }
            } else {
                append(WireChange(record: uri, entity: change.entityName, kind: kind, values: values, stamps: stamps))
            }
        case .delete:
            // The edits since the last delete are moot: the delete replaces them.
            while let tail = last, tail.kind != .delete { removeLast() }
            let delete = WireChange(record: uri, entity: change.entityName, kind: .delete,
                                    stamps: [WireChange.deleteStampKey: change.stamp.description])
            if last?.kind == .delete { self[count - 1] = delete } else { append(delete) }
        case .link, .unlink:
            unsupported += 1
        }
    }
}

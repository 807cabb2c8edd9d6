import Foundation
import Tandem
import TandemWire

/// Turns journal transactions into the changes a push sends: one change per record and
/// stretch of its life (insert/update merged, the newest value and stamp of each column), a
/// delete replacing the edits before it, a re-insert after a delete kept as its own change.
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
                var list = segments[uri] ?? []
                if list.isEmpty { order.append(uri) }
                let open = list.last.map { $0.kind != .delete } ?? false
                switch change.kind {
                case .insert, .update:
                    var values: [String: WireValue] = [:]
                    var stamps: [String: String] = [:]
                    for (column, value) in change.values {
                        values[column] = WireValue(value)
                        stamps[column] = change.stamp(of: column).description
                    }
                    if open {
                        list[list.count - 1].values.merge(values) { _, new in new }
                        list[list.count - 1].stamps.merge(stamps) { _, new in new }
                    } else {
                        list.append(WireChange(record: uri, entity: change.entityName, kind: change.kind == .insert ? .insert : .update,
                                               values: values, stamps: stamps))
                    }
                case .delete:
                    let delete = WireChange(record: uri, entity: change.entityName, kind: .delete,
                                            stamps: [WireChange.deleteStampKey: change.stamp.description])
                    if let last = list.last, last.kind == .delete || open {
                        list[list.count - 1] = delete
                    } else {
                        list.append(delete)
                    }
                case .link, .unlink:
                    plan.unsupported += 1
                }
                segments[uri] = list
            }
        }
        for uri in order { plan.changes += segments[uri] ?? [] }
        return plan
    }

    /// Splits changes into pushes of at most `count` changes and about `bytes` of JSON.
    static func chunks(_ changes: [WireChange], count: Int, bytes: Int) -> [[WireChange]] {
        var result: [[WireChange]] = []
        var current: [WireChange] = []
        var size = 0
        for change in changes {
            var json = WireJSON()
            json.append(change)
            let length = json.bytes.count + 1
            if !current.isEmpty && (current.count >= count || size + length > bytes) {
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

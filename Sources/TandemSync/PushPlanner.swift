import Foundation
import Tandem
import TandemSchema
import TandemWire

/// Turns journal transactions into the changes a push sends, per record: an insert, then its
/// later updates merged into one (the newest value and stamp of each column), a delete
/// replacing the edits before it, a re-insert after a delete kept as its own change, and
/// many-to-many links and unlinks as their own changes, in order.
/// Pure: the same transactions always give the same changes, so a retried range gets the
/// same idempotency keys.
enum PushPlanner {
    struct Plan {
        var changes: [WireChange] = []
    }

    static func plan(_ transactions: [HistoryTransaction]) -> Plan {
        var plan = Plan()
        let count = transactions.reduce(0) { $0 + $1.changes.count }
        var order: [String] = []
        order.reserveCapacity(count)
        var segments = [String: [WireChange]](minimumCapacity: count)
        var stamps = StampTexts()
        for transaction in transactions {
            for change in transaction.changes {
                let uri = change.persistentModelID.description
                if segments[uri] == nil { order.append(uri) }
                // Mutated in place: a copy taken out and stored back would copy the array
                // on every change.
                segments[uri, default: []].apply(change, uri: uri, stamps: &stamps)
            }
        }
        plan.changes.reserveCapacity(order.count)
        // Links and unlinks after every record change: a link is sent after the inserts of
        // both its records, so a replica that lacks one of them when the link arrives knows
        // it was deleted (the applier then leaves the link out).
        var links: [WireChange] = []
        for uri in order {
            for change in segments[uri] ?? [] {
                if change.kind.isLink { links.append(change) } else { plan.changes.append(change) }
            }
        }
        plan.changes += links
        return plan
    }

    /// `changes` (a plan's: each record's changes side by side, links last) with the records
    /// whose unique values they set or give up moved to the front, in their order; the rest
    /// keep theirs. Pure, as ``plan(_:)`` is.
    ///
    /// ```swift
    /// PushPlanner.uniqueValuesFirst(plan.changes, uniqueColumns: ["Project": ["name"]])
    /// ```
    static func uniqueValuesFirst(_ changes: [WireChange], uniqueColumns: [String: Set<String>]) -> [WireChange] {
        var first: [WireChange] = [], rest: [WireChange] = [], links: [WireChange] = []
        var index = 0
        while index < changes.count {
            var end = index + 1
            while end < changes.count, changes[end].record == changes[index].record, changes[end].kind.isLink == changes[index].kind.isLink { end += 1 }
            let segment = changes[index..<end]
            if changes[index].kind.isLink {
                links += segment
            } else if let columns = uniqueColumns[changes[index].entity],
                segment.contains(where: { $0.kind == .delete || $0.values.keys.contains(where: columns.contains) })
            {
                first += segment
            } else {
                rest += segment
            }
            index = end
        }
        return first + rest + links
    }

    /// Changes to send in one push, with their wire JSON array, written once while the
    /// batches were cut (measuring a batch needs it anyway).
    struct Batch: Sendable {
        var changes: [WireChange]
        /// `[change,change,…]` as the push body carries it.
        var json: [UInt8]

        init(_ changes: [WireChange]) {
            var writer = WireJSON()
            writer.array(changes) { $0.append($1) }
            self.init(changes: changes, json: writer.bytes)
        }

        init(changes: [WireChange], json: [UInt8]) {
            self.changes = changes
            self.json = json
        }

        /// The push request: the same bytes as `WireJSON.append(PushRequest)`. The answer
        /// lists only the outcomes of changes that lost a value or were not applied
        /// (`outcomes: .lost`, the default), or every change's.
        func body(schemaVersion: Int, outcomes: PushRequest.OutcomeDetail = .lost, resync: Bool = false) -> Data {
            var writer = WireJSON()
            writer.raw("{\"changes\":")
            writer.rawJSON(json)
            writer.appendOutcomeDetail(outcomes)
            writer.appendResync(resync ? true : nil)
            writer.raw(",\"schemaVersion\":")
            writer.number(Int64(schemaVersion))
            writer.raw("}")
            return Data(writer.bytes)
        }
    }

    /// Splits changes into pushes of at most `count` changes and about `bytes` of JSON. A
    /// record's changes (an insert and its updates, a delete and a re-insert) stay in one
    /// push, so pushes sent side by side never touch the same record and the server logs
    /// each record's changes in order.
    static func chunks(_ changes: [WireChange], count: Int, bytes: Int) -> [Batch] {
        var result: [Batch] = []
        var current: [WireChange] = []
        var json: [UInt8] = [UInt8(ascii: "[")]
        for change in changes {
            var writer = WireJSON()
            writer.append(change)
            let sameRecord = current.last?.record == change.record
            if !current.isEmpty && !sameRecord && (current.count >= count || json.count + writer.bytes.count > bytes) {
                json.append(UInt8(ascii: "]"))
                result.append(Batch(changes: current, json: json))
                current = []
                json = [UInt8(ascii: "[")]
            }
            if !current.isEmpty { json.append(UInt8(ascii: ",")) }
            current.append(change)
            json += writer.bytes
        }
        if !current.isEmpty {
            json.append(UInt8(ascii: "]"))
            result.append(Batch(changes: current, json: json))
        }
        return result
    }
}

/// The text of the stamp last written: a transaction's changes mostly share one stamp, and
/// formatting it again for every column showed up in profiles.
private struct StampTexts {
    var last: HLCTimestamp?
    var text = ""

    mutating func text(of stamp: HLCTimestamp) -> String {
        if stamp != last {
            last = stamp
            text = stamp.description
        }
        return text
    }
}

extension [WireChange] {
    /// Adds one journaled change to a record's pending changes (see ``PushPlanner/plan(_:)``).
    fileprivate mutating func apply(_ change: HistoryChange, uri: String, stamps texts: inout StampTexts) {
        switch change.kind {
        case .insert, .update:
            // Compact stamps: the newest under "*", and the values stamped otherwise (one
            // edit usually stamps them all alike).
            var values = [String: WireValue](minimumCapacity: change.values.count)
            var newest: HLCTimestamp?
            for (column, value) in change.values {
                values[column] = WireValue(value)
                let stamp = change.stamp(of: column)
                if newest.map({ stamp > $0 }) ?? true { newest = stamp }
            }
            var stamps: [String: String] = [:]
            if let newest {
                stamps[WireChange.deleteStampKey] = texts.text(of: newest)
                for column in change.values.keys where change.stamp(of: column) != newest {
                    stamps[column] = change.stamp(of: column).description
                }
            }
            // An insert stays its own change, with its own stamps: merging later
            // updates into it would date the record's creation to the newest update,
            // and a delete made in between would no longer win against it.
            let kind: WireChange.Kind = change.kind == .insert ? .insert : .update
            if let tail = last, tail.kind == kind {
                // Merged value by value, each with its stamp, then made compact again.
                var merged = tail.withStampPerValue()
                merged.values.merge(values) { _, new in new }
                for column in values.keys { merged.stamps[column] = texts.text(of: change.stamp(of: column)) }
                self[count - 1] = merged.compacted()
            } else {
                append(WireChange(record: uri, entity: change.entityName, kind: kind, values: values, stamps: stamps))
            }
        case .delete:
            // The edits since the last delete are moot: the delete replaces them.
            while let tail = last, tail.kind != .delete { removeLast() }
            let delete = WireChange(
                record: uri, entity: change.entityName, kind: .delete,
                stamps: [WireChange.deleteStampKey: texts.text(of: change.stamp)])
            if last?.kind == .delete { self[count - 1] = delete } else { append(delete) }
        case .link, .unlink:
            // An unlink after the record's delete is the delete clearing its links: moot.
            if change.kind == .unlink, last?.kind == .delete { return }
            append(
                WireChange(
                    record: uri, entity: change.entityName, kind: change.kind == .link ? .link : .unlink,
                    values: change.values.mapValues(WireValue.init), stamps: [WireChange.deleteStampKey: texts.text(of: change.stamp)]))
        }
    }
}

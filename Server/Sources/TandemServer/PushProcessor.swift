import Foundation
import TandemConflicts
import TandemSchema
import TandemWire

/// Validates a push against its schema version and applies it change by change with
/// ``RecordMerge``; runs inside the storage's transaction, so a failure applies nothing.
struct PushProcessor: Sendable {
    let datasetName: String
    /// The dataset's cursors in the storage's epoch, for the cursors of the answer's
    /// ``PushEcho``.
    let cursorScope: Cursor.Scope
    let schemaVersion: Int
    let schema: Schema
    let now: Int64
    let maxClockSkew: Int64
    /// A resync's push (``PushRequest/resync``).
    var resync = false

    /// Checks every change before anything is written; the first problem is the answer.
    ///
    /// - Returns: the changes with their record URIs in canonical form (lowercase UUID), and
    ///   each change's stamps, parsed.
    func validate(_ changes: [WireChange]) throws -> (changes: [WireChange], stamps: [[String: HLCTimestamp]]) {
        var columns: [String: [String: Schema.Column]] = [:]
        var enums: [String: [String: EnumCases]] = [:]
        for entity in schema.entities {
            columns[entity.name] = Dictionary(entity.columns.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            let cases = EnumCases.columns(of: entity)
            if !cases.isEmpty { enums[entity.name] = cases }
        }
        var normalized: [WireChange] = []
        var stamps: [[String: HLCTimestamp]] = []
        for (index, change) in changes.enumerated() {
            var change = change
            stamps.append(try validate(&change, at: index, columns: columns, enums: enums))
            normalized.append(change)
        }
        return (normalized, stamps)
    }

    /// Checks change `index`: its record (rewritten in canonical form), its stamps (returned,
    /// parsed, each value's own), its shape for its kind.
    private func validate(
        _ change: inout WireChange, at index: Int, columns: [String: [String: Schema.Column]], enums: [String: [String: EnumCases]]
    ) throws -> [String: HLCTimestamp] {
        let entityColumns = try validateRecord(&change, at: index, columns: columns)
        let stamps = try parseStamps(of: change, at: index)
        try validateShape(of: change, at: index, columns: entityColumns)
        if let cases = enums[change.entity], change.kind == .insert || change.kind == .update {
            try validateEnumValues(of: change, at: index, cases: cases)
        }
        return stamps
    }

    /// The record URI (made canonical), its dataset and entity: the entity's columns.
    private func validateRecord(_ change: inout WireChange, at index: Int, columns: [String: [String: Schema.Column]]) throws -> [String: Schema.Column] {
        var item: String { "changes[\(index)]" }  // written only for an error
        guard let uri = RecordURI(change.record) else {
            throw APIError.invalid("invalid_record", "\(item).record '\(change.record)' is not a record URI; expected tandem://<dataset>/<Entity>/<uuid>")
        }
        guard uri.dataset == datasetName else {
            throw APIError(.forbidden, "record_in_other_dataset", "\(item).record belongs to dataset '\(uri.dataset)', not '\(datasetName)'")
        }
        guard uri.entity == change.entity else {
            throw APIError.invalid("invalid_record", "\(item).record names entity '\(uri.entity)' but the change says '\(change.entity)'")
        }
        guard let columns = columns[change.entity] else {
            throw APIError.invalid("unknown_entity", "\(item): entity '\(change.entity)' is not in schema version \(schemaVersion)")
        }
        if !uri.wasCanonical { change.record = uri.text }
        return columns
    }

    /// The change's stamps, parsed and within the clock skew allowed: each value's (an
    /// insert's or update's default given to the values without their own, what the merge
    /// compares), or a delete's one under "*".
    private func parseStamps(of change: WireChange, at index: Int) throws -> [String: HLCTimestamp] {
        var item: String { "changes[\(index)]" }
        // A delete: one stamp, under "*". An insert or update: a stamp per value, or a
        // default under "*" for the values without one (compact stamps). Compared without
        // building sets, which cost two allocations per change.
        let star = change.stamps[WireChange.deleteStampKey] != nil
        let stampsMatch =
            change.kind == .delete
            ? change.stamps.count == 1 && star
            : (star || change.stamps.count == change.values.count)
                && change.stamps.keys.allSatisfy { $0 == WireChange.deleteStampKey || change.values[$0] != nil }
        guard stampsMatch else {
            throw APIError.invalid(
                "invalid_stamp",
                change.kind == .delete
                    ? "\(item).stamps of a delete is one stamp, under \"*\"; got \(change.stamps.keys.sorted())"
                    : "\(item).stamps needs a stamp per value, or a default under \"*\", and names only the change's values; got \(change.stamps.keys.sorted())")
        }
        var stamps: [String: HLCTimestamp] = [:]
        for (key, text) in change.stamps {
            guard let stamp = HLCTimestamp(text) else {
                throw APIError.invalid("invalid_stamp", "\(item).stamps.\(key): '\(text)' is not an HLC stamp (<12 hex>-<4 hex>-<16 hex>)")
            }
            if Int64(clamping: stamp.physical) > now.addingReportingOverflow(maxClockSkew).partialValue {
                throw APIError(
                    .unprocessableContent, "clock_skew",
                    "\(item).stamps.\(key) is \((Int64(clamping: stamp.physical) - now) / 1000) s ahead of the server's clock; correct the client clock (serverTime) and stamp again",
                    serverTime: now, maxClockSkew: maxClockSkew)
            }
            stamps[key] = stamp
        }
        if change.kind != .delete, let fallback = stamps.removeValue(forKey: WireChange.deleteStampKey) {
            for column in change.values.keys where stamps[column] == nil { stamps[column] = fallback }
        }
        return stamps
    }

    /// What a change of its kind carries: a delete no values (and no `mergedInto`, the
    /// server's); a link one many-to-many relationship naming a member's UUID; an insert or
    /// update values of the entity's columns that fit them.
    private func validateShape(of change: WireChange, at index: Int, columns: [String: Schema.Column]) throws {
        var item: String { "changes[\(index)]" }
        guard change.mergedFrom == nil else {
            throw APIError.invalid(
                "invalid_change", "\(item).mergedFrom is written by the server when it carries a merged record's values to its survivor; send a plain \(change.kind.rawValue)")
        }
        switch change.kind {
        case .delete:
            guard change.values.isEmpty else {
                throw APIError.invalid("invalid_change", "\(item): a delete has no values and one stamp under \"*\"")
            }
            guard change.mergedInto == nil else {
                throw APIError.invalid("invalid_change", "\(item).mergedInto is written by the server when it merges two records holding one unique value; send a plain delete")
            }
        case .link, .unlink:
            let sides =
                schema.entity(named: change.entity).map { entity in
                    entity.relationships.filter { if case .joinTable(_, "source", _) = schema.storage(of: $0, in: entity) { true } else { false } }.map(\.name)
                } ?? []
            guard change.mergedInto == nil, change.values.count == 1, let (name, member) = change.values.first, sides.contains(name) else {
                throw APIError.invalid(
                    "invalid_link",
                    "\(item): a \(change.kind.rawValue) carries one value: a many-to-many relationship of '\(change.entity)' (\(sides.isEmpty ? "it has none it stores" : sides.sorted().joined(separator: ", "))) → the member's UUID"
                )
            }
            guard case .text(let id) = member, UUID(uuidString: id) != nil, id == id.lowercased() else {
                throw APIError.invalid("invalid_link", "\(item).values.\(name): the member is a UUID as lowercase text; got \(member.kindDescription)")
            }
        case .insert, .update:
            guard change.mergedInto == nil else {
                throw APIError.invalid("invalid_change", "\(item).mergedInto belongs to a delete only; an \(change.kind.rawValue) cannot carry it")
            }
            guard !change.values.isEmpty else { throw APIError.invalid("invalid_change", "\(item): an \(change.kind.rawValue) needs values") }
            for (key, value) in change.values {
                guard key != Schema.Column.primaryKey.name, let column = columns[key] else {
                    throw APIError.invalid("unknown_attribute", "\(item).values.\(key): '\(change.entity)' has no column '\(key)' in schema version \(schemaVersion)")
                }
                guard value.fits(column) else {
                    throw APIError.invalid(
                        "invalid_value", "\(item).values.\(key): \(value.kindDescription) does not fit column '\(key)' (\(column.sqlType.rawValue)\(column.isNullable ? ", nullable" : ""))")
                }
            }
        }
    }

    /// Refuses a raw value that is none of its enum's cases in the push's schema version
    /// (where the version lists them: one registered from the sources, `tandem schema
    /// publish`). A newer client's new case comes with the newer version, which lists it.
    private func validateEnumValues(of change: WireChange, at index: Int, cases: [String: EnumCases]) throws {
        for (key, value) in change.values {
            guard let enumeration = cases[key], !enumeration.contains(value) else { continue }
            throw APIError.invalid(
                "invalid_enum_value",
                "changes[\(index)].values.\(key): \(String(decoding: WireJSON.data { $0.append(value) }, as: UTF8.self)) is not a case of enum \(enumeration.enumeration.typeName) in schema version \(schemaVersion); its cases: \(enumeration.listed)"
            )
        }
    }

    /// The push's canonical text (written for its idempotency hash) and where each change
    /// lies in it: a change applied whole is logged from these bytes.
    struct CanonicalText: Sendable {
        var bytes: [UInt8]
        /// `nil` for a change validation rewrote (its record URI, to lowercase).
        var spans: [WireJSON.ChangeSpan?]

        /// The log entry of change `index` applied whole: its text, with the record's
        /// creation stamp under an insert's `"*"`. A compact insert usually has it there
        /// already; an insert with a stamp per value gets it spliced in first (`"*"` sorts
        /// before any column name). `nil`, to be written anew, when its `"*"` is another.
        func logEntry(_ index: Int, _ change: WireChange, created: HLCTimestamp?) -> ArraySlice<UInt8>? {
            guard index < spans.count, let span = spans[index] else { return nil }
            guard let created else { return bytes[span.range] }
            if let star = change.stamps[WireChange.deleteStampKey] {
                return star == created.description ? bytes[span.range] : nil
            }
            guard change.stamps.keys.allSatisfy({ $0 > WireChange.deleteStampKey }) else { return nil }
            var entry: [UInt8] = []
            entry.reserveCapacity(span.range.count + 42)
            entry += bytes[span.range.lowerBound..<span.stamps]
            entry += Array("\"\(WireChange.deleteStampKey)\":\"\(created.description)\"".utf8)
            if !change.stamps.isEmpty { entry.append(UInt8(ascii: ",")) }
            entry += bytes[span.stamps..<span.range.upperBound]
            return entry[...]
        }
    }

    /// What a push did: its answer, and counts for the metrics.
    struct Applied: Sendable {
        var response: PushResponse
        /// Changes with anything applied.
        var applied = 0
        /// Values that lost.
        var lost = 0
    }

    /// An insert's creation stamp: its `"*"` when its values carry stamps of their own too (an
    /// insert the server refused, sent again with later edits' values: it is as old as its
    /// making), else its newest value's (a compact insert's one stamp).
    static func creation(of change: WireChange, _ stamps: [String: HLCTimestamp]) -> HLCTimestamp? {
        if change.stamps.count > 1, let star = change.stamps[WireChange.deleteStampKey], let stamp = HLCTimestamp(star) { return stamp }
        return stamps.values.max()
    }

    /// Merges every change into its record, appends what was applied to the log, records
    /// what lost; returns the answer, listing every change's outcome or, for `.lost`
    /// (``PushRequest/OutcomeDetail``), only those of changes that lost a value or were not
    /// applied. The steps are ``PushRun``'s: each change in turn, then the unique values the
    /// push's records hold, then the answer.
    func apply(
        _ changes: [WireChange], stamps: [[String: HLCTimestamp]], plan: PushPlan, canonical: CanonicalText? = nil,
        outcomes detail: PushRequest.OutcomeDetail? = nil, to workspace: inout PushWorkspace
    ) throws -> Applied {
        // The workspace moves into the run and back (swapped, not copied: a copy would
        // copy its tables on the run's first write).
        var run = PushRun(
            self, plan: plan, changeCount: changes.count, canonical: canonical, every: detail != .lost,
            workspace: PushWorkspace(lastPosition: workspace.lastLogPosition()))
        swap(&run.workspace, &workspace)
        defer { swap(&run.workspace, &workspace) }
        for (index, (change, changeStamps)) in zip(changes, stamps).enumerated() {
            try run.apply(change, stamps: changeStamps, at: index)
        }
        try run.settleUniqueValues()
        return run.answer()
    }
}

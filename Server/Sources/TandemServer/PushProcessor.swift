import Foundation
import TandemConflicts
import TandemSchema
import TandemWire

/// Validates a push against its schema version and applies it change by change with
/// ``RecordMerge``; runs inside the storage's transaction, so a failure applies nothing.
struct PushProcessor: Sendable {
    let datasetName: String
    /// The dataset's id, for the cursors of the answer's ``PushEcho``.
    let datasetID: Int64
    let schemaVersion: Int
    let schema: Schema
    let now: Int64
    let maxClockSkew: Int64

    /// Checks every change before anything is written; the first problem is the answer.
    ///
    /// - Returns: the changes with their record URIs in canonical form (lowercase UUID), and
    ///   each change's stamps, parsed.
    func validate(_ changes: [WireChange]) throws -> (changes: [WireChange], stamps: [[String: HLCTimestamp]]) {
        var columns: [String: [String: Schema.Column]] = [:]
        for entity in schema.entities {
            columns[entity.name] = Dictionary(entity.columns.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        }
        var normalized: [WireChange] = []
        var stamps: [[String: HLCTimestamp]] = []
        for (index, change) in changes.enumerated() {
            var change = change
            stamps.append(try validate(&change, at: index, columns: columns))
            normalized.append(change)
        }
        return (normalized, stamps)
    }

    private func validate(_ change: inout WireChange, at index: Int, columns: [String: [String: Schema.Column]]) throws -> [String: HLCTimestamp] {
        var item: String { "changes[\(index)]" }   // written only for an error
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
        // A delete: one stamp, under "*". An insert or update: a stamp per value, or a
        // default under "*" for the values without one (compact stamps). Compared without
        // building sets, which cost two allocations per change.
        let star = change.stamps[WireChange.deleteStampKey] != nil
        let stampsMatch = change.kind == .delete
            ? change.stamps.count == 1 && star
            : (star || change.stamps.count == change.values.count)
                && change.stamps.keys.allSatisfy { $0 == WireChange.deleteStampKey || change.values[$0] != nil }
        guard stampsMatch else {
            throw APIError.invalid("invalid_stamp", change.kind == .delete
                ? "\(item).stamps of a delete is one stamp, under \"*\"; got \(change.stamps.keys.sorted())"
                : "\(item).stamps needs a stamp per value, or a default under \"*\", and names only the change's values; got \(change.stamps.keys.sorted())")
        }
        var stamps: [String: HLCTimestamp] = [:]
        for (key, text) in change.stamps {
            guard let stamp = HLCTimestamp(text) else {
                throw APIError.invalid("invalid_stamp", "\(item).stamps.\(key): '\(text)' is not an HLC stamp (<12 hex>-<4 hex>-<16 hex>)")
            }
            if Int64(clamping: stamp.physical) > now.addingReportingOverflow(maxClockSkew).partialValue {
                throw APIError(.unprocessableContent, "clock_skew",
                               "\(item).stamps.\(key) is \((Int64(clamping: stamp.physical) - now) / 1000) s ahead of the server's clock; correct the client clock (serverTime) and stamp again",
                               serverTime: now, maxClockSkew: maxClockSkew)
            }
            stamps[key] = stamp
        }
        // The stamp of each value (an insert's or update's default given to the values
        // without their own): what the merge compares.
        if change.kind != .delete, let fallback = stamps.removeValue(forKey: WireChange.deleteStampKey) {
            for column in change.values.keys where stamps[column] == nil { stamps[column] = fallback }
        }
        switch change.kind {
        case .delete:
            guard change.values.isEmpty, stamps[WireChange.deleteStampKey] != nil else {
                throw APIError.invalid("invalid_change", "\(item): a delete has no values and one stamp under \"*\"")
            }
            guard change.mergedInto == nil else {
                throw APIError.invalid("invalid_change", "\(item).mergedInto is written by the server when it merges two records holding one unique value; send a plain delete")
            }
        case .link, .unlink:
            let sides = schema.entity(named: change.entity).map { entity in
                entity.relationships.filter { if case .joinTable(_, "source", _) = schema.storage(of: $0, in: entity) { true } else { false } }.map(\.name)
            } ?? []
            guard change.mergedInto == nil, change.values.count == 1, let (name, member) = change.values.first, sides.contains(name) else {
                throw APIError.invalid("invalid_link", "\(item): a \(change.kind.rawValue) carries one value: a many-to-many relationship of '\(change.entity)' (\(sides.isEmpty ? "it has none it stores" : sides.sorted().joined(separator: ", "))) → the member's UUID")
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
                    throw APIError.invalid("invalid_value", "\(item).values.\(key): \(value.kindDescription) does not fit column '\(key)' (\(column.sqlType.rawValue)\(column.isNullable ? ", nullable" : ""))")
                }
            }
        }
        return stamps
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

    /// Appends `applied` to the log: from the push's own text when change `index` was
    /// applied whole (`created`, an insert's creation stamp, is spliced in as it is among
    /// `applied`'s stamps), written anew otherwise. `applied` is built only when needed
    /// (the usual new record is logged from the push's text).
    private func log(_ applied: @autoclosure () -> WireChange, whole: Bool, index: Int, sent change: WireChange, created: HLCTimestamp?,
                     canonical: CanonicalText?, to transaction: inout any PushTransaction) throws -> Int64 {
        if whole, let json = canonical?.logEntry(index, change, created: created) {
            return try transaction.appendLog(applied(), json: json, schemaVersion: schemaVersion)
        }
        return try transaction.appendLog(applied(), schemaVersion: schemaVersion)
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
    /// applied.
    func apply(_ changes: [WireChange], stamps: [[String: HLCTimestamp]], canonical: CanonicalText? = nil,
               outcomes detail: PushRequest.OutcomeDetail? = nil, to transaction: inout any PushTransaction) throws -> Applied {
        let every = detail != .lost
        var result = Applied(response: PushResponse(outcomes: [], changeCount: every ? nil : changes.count, serverTime: now))
        func outcome(_ index: Int, position: Int64?, applied: @autoclosure () -> [String], lost: [LostValue]) {
            if position != nil { result.applied += 1 }
            result.lost += lost.count
            guard every || position == nil || !lost.isEmpty else { return }
            result.response.outcomes.append(ChangeOutcome(index: every ? nil : index, position: position, applied: applied(), lost: lost))
        }
        // The log is the push's alone from here to its end (the writer is serialized): an
        // echo when every entry is what the push sent.
        let before = try transaction.lastLogPosition()
        var last = before
        var isEcho = true
        let unique = UniqueMerge(schema: schema)
        // Each merge needs two live records holding one value, so a push's merges are few;
        // the bound only keeps a cascade of carried values finite.
        var mergesLeft = 64

        /// Record `uri` now holds the unique values `new` instead of `old`: frees the ones it
        /// gave up and claims the others (all of `new` with `claimAll`); a value another live
        /// record holds merges the two.
        func settle(_ uri: String, _ entity: String, old: [String], new: [String], claimAll: Bool = false) throws {
            for key in old where !new.contains(key) { try transaction.releaseUnique(entity: entity, key: key, record: uri) }
            for key in new where claimAll || !old.contains(key) {
                guard let holder = try transaction.claimUnique(entity: entity, key: key, record: uri) else { continue }
                guard let held = try transaction.record(holder), held.entity == entity, unique.keys(of: held).contains(key) else {
                    // The holder no longer holds it (the index is kept with every change, so
                    // only a damaged index gets here): the value is free.
                    try transaction.releaseUnique(entity: entity, key: key, record: holder)
                    _ = try transaction.claimUnique(entity: entity, key: key, record: uri)
                    continue
                }
                guard mergesLeft > 0 else { continue }
                mergesLeft -= 1
                try merge(uri, holder, entity)
                return   // the merge settled both records' values
            }
        }

        /// Records of unique entities this push changed, in the order it first touched them,
        /// with the unique values each held before: settled when every change is applied.
        /// A push holds a replica's records as they are after its last save (each record's
        /// edits coalesced), so values swapped between two records, or freed by one record and
        /// taken by another in a later save, never meet: only a value another replica's record
        /// holds is a collision. `new`: the values it holds after its last change in the push.
        var touched: [(uri: String, entity: String, old: [String], new: [String])] = []
        var touchedIndex: [String: Int] = [:]
        /// Records before it are in `touchedIndex`; later ones were new records, indexed only
        /// when a touch needs to look them up (a bulk import never does).
        var indexedThrough = 0
        func touch(_ uri: String, _ entity: String, old: [String], new: [String], isNew: Bool = false) {
            // A record the storage did not have: this is its first touch (a later change of it
            // finds it stored).
            if isNew {
                touched.append((uri, entity, old, new))
                return
            }
            while indexedThrough < touched.count {
                touchedIndex[touched[indexedThrough].uri] = indexedThrough
                indexedThrough += 1
            }
            if let index = touchedIndex[uri] {
                touched[index].new = new
                return
            }
            touchedIndex[uri] = touched.count
            touched.append((uri, entity, old, new))
            indexedThrough = touched.count
        }
        /// Whether this push merged two records (records settled after it are read again).
        var anyMerge = false

        // Many-to-many links: a link is a field of its owner, `<relationship>#<member id>`.
        // Replicas drop a record's join rows when they apply its delete, whatever the links'
        // stamps; the server says what becomes of each link that names the record, in log
        // order after the delete or the revival, so every replica ends with the same rows.
        var linkOwnerEntities: Set<String> = []
        var linkMemberEntities: Set<String> = []
        for entity in schema.entities {
            for relationship in entity.relationships {
                guard case .joinTable(_, "source", _) = schema.storage(of: relationship, in: entity) else { continue }
                linkOwnerEntities.insert(entity.name)
                linkMemberEntities.insert(relationship.destination)
            }
        }
        /// The member a link field of an `entity` record names.
        func linkMember(_ entity: String, _ field: String) -> String? {
            guard let hash = field.firstIndex(of: "#"),
                  let destination = schema.entity(named: entity)?.relationship(named: String(field[..<hash]))?.destination else { return nil }
            return "tandem://\(datasetName)/\(destination)/\(field[field.index(after: hash)...])"
        }
        func logLink(_ owner: String, _ entity: String, field: String, linked: Bool, stamp: HLCTimestamp) throws {
            guard let hash = field.firstIndex(of: "#") else { return }
            last = try transaction.appendLog(WireChange(record: owner, entity: entity, kind: linked ? .link : .unlink,
                                                        values: [String(field[..<hash]): .text(String(field[field.index(after: hash)...]))],
                                                        stamps: [WireChange.deleteStampKey: stamp.description]), schemaVersion: schemaVersion)
            isEcho = false
        }
        /// Record `uri` has a newer delete, stamped `deleted`: links older than it go (a link
        /// newer than the delete stays, as any value does, and comes back with the record).
        /// Each is logged as an unlink for the replicas that pull the link after applying the
        /// delete (the replica that made the delete, say, when it had not seen the link).
        func linksDied(_ uri: String, _ entity: String, before: RecordState?, deleted: HLCTimestamp) throws {
            if linkOwnerEntities.contains(entity), let before {
                // Its own link fields: the merge dropped those older than the delete.
                for (field, link) in before.fields.sorted(by: { $0.key < $1.key })
                where field.contains("#") && link.value == .bool(true) && link.stamp < deleted {
                    try logLink(uri, entity, field: field, linked: false, stamp: deleted)
                }
            }
            guard linkMemberEntities.contains(entity) else { return }
            for (owner, field) in try transaction.linkOwners(of: uri) {
                guard let ownerState = try transaction.record(owner), let link = ownerState.fields[field],
                      link.value == .bool(true), link.stamp < deleted else { continue }
                var state: RecordState? = ownerState
                let unlinked = RecordMerge.apply(WireChange(record: owner, entity: ownerState.entity, kind: .update, values: [field: .bool(false)]),
                                                 stamps: [field: deleted], to: &state)
                if let state, state != ownerState { try transaction.setRecord(owner, state) }
                if !unlinked.applied.isEmpty { try logLink(owner, ownerState.entity, field: field, linked: false, stamp: deleted) }
            }
        }
        /// Newer than both ends' newest deletes: a link every replica dropped with a delete
        /// (a merge's too) stays out.
        func newer(_ stamp: HLCTimestamp, than a: RecordState, _ b: RecordState) -> Bool {
            a.deleted.map { stamp > $0 } ?? true && b.deleted.map { stamp > $0 } ?? true
        }
        /// Record `uri` lives again (re-inserted after its delete, or restored because a
        /// delete lost to a newer insert): replicas that applied the delete dropped its links,
        /// so those that still hold (both ends live) are logged again.
        func linksRevived(_ uri: String, _ entity: String, state: RecordState) throws {
            if linkOwnerEntities.contains(entity) {
                for (field, link) in state.fields.sorted(by: { $0.key < $1.key }) where field.contains("#") && link.value == .bool(true) {
                    guard let member = linkMember(entity, field), let memberState = try transaction.record(member), !memberState.isDeleted,
                          newer(link.stamp, than: state, memberState) else { continue }
                    try logLink(uri, entity, field: field, linked: true, stamp: link.stamp)
                }
            }
            guard linkMemberEntities.contains(entity) else { return }
            for (owner, field) in try transaction.linkOwners(of: uri) {
                guard let ownerState = try transaction.record(owner), !ownerState.isDeleted, let link = ownerState.fields[field],
                      link.value == .bool(true), newer(link.stamp, than: state, ownerState) else { continue }
                try logLink(owner, ownerState.entity, field: field, linked: true, stamp: link.stamp)
            }
        }

        /// Merges records `a` and `b` (one entity, both holding a unique value) as
        /// ``UniqueMerge`` says, and logs it: the loser's values and links as an update and
        /// links of the survivor, then the loser's delete with `mergedInto`.
        func merge(_ a: String, _ b: String, _ entity: String) throws {
            isEcho = false
            anyMerge = true
            let survivor = UniqueMerge.survivor(of: a, and: b)
            let loser = survivor == a ? b : a
            guard let loserState = try transaction.record(loser), let survivorBefore = try transaction.record(survivor) else { return }
            for key in unique.keys(of: loserState) { try transaction.releaseUnique(entity: entity, key: key, record: loser) }
            var survivorState: RecordState? = survivorBefore
            // Values the survivor holds already keep the survivor's stamp: the replica that wrote
            // them still sees its own edit, and logs it if a later one replaces it.
            let values = loserState.values.filter { survivorBefore.fields[$0.key]?.value != $0.value.value }
            if !values.isEmpty {
                let carried = RecordMerge.apply(WireChange(record: survivor, entity: entity, kind: .update, values: values.mapValues(\.value)),
                                                stamps: values.mapValues(\.stamp), to: &survivorState)
                var position: Int64?
                if !carried.applied.isEmpty {
                    let applied = WireChange(record: survivor, entity: entity, kind: .update, values: carried.applied.mapValues(\.value),
                                             stamps: carried.applied.mapValues(\.stamp.description)).compacted()
                    position = try transaction.appendLog(applied, schemaVersion: schemaVersion)
                    last = position!
                }
                for lost in carried.lost { try transaction.recordLost(lost, record: survivor, position: position, at: now) }
                result.lost += carried.lost.count
            }
            for (field, link) in loserState.fields.sorted(by: { $0.key < $1.key }) {
                guard let hash = field.firstIndex(of: "#") else { continue }
                let carried = RecordMerge.apply(WireChange(record: survivor, entity: entity, kind: .update, values: [field: link.value]),
                                                stamps: [field: link.stamp], to: &survivorState)
                guard !carried.applied.isEmpty else { continue }
                if let memberURI = linkMember(entity, field) { try transaction.addLinkOwner(survivor, field: field, member: memberURI) }
                let member = String(field[field.index(after: hash)...])
                last = try transaction.appendLog(WireChange(record: survivor, entity: entity, kind: link.value == .bool(true) ? .link : .unlink,
                                                            values: [String(field[..<hash]): .text(member)],
                                                            stamps: [WireChange.deleteStampKey: link.stamp.description]), schemaVersion: schemaVersion)
            }
            if let survivorState, survivorState != survivorBefore { try transaction.setRecord(survivor, survivorState) }
            // The links naming the loser (fields of other records) name the survivor, each with
            // its stamp, logged: replicas drop the loser's rows with its delete, and link the
            // survivor as the server does, not as each one's rows happened to be.
            if linkMemberEntities.contains(entity), let survivorID = RecordURI(survivor)?.id {
                for (owner, field) in try transaction.linkOwners(of: loser) where owner != loser {
                    guard let ownerState = try transaction.record(owner), !ownerState.isDeleted, let link = ownerState.fields[field],
                          link.value == .bool(true), let hash = field.firstIndex(of: "#") else { continue }
                    let moved = field[..<hash] + "#" + survivorID
                    var state: RecordState? = ownerState
                    let carried = RecordMerge.apply(WireChange(record: owner, entity: ownerState.entity, kind: .update, values: [moved: .bool(true)]),
                                                    stamps: [moved: link.stamp], to: &state)
                    guard !carried.applied.isEmpty, let state else { continue }
                    try transaction.setRecord(owner, state)
                    try transaction.addLinkOwner(owner, field: moved, member: survivor)
                    try logLink(owner, ownerState.entity, field: moved, linked: true, stamp: link.stamp)
                }
            }
            let stamp = UniqueMerge.mergeStamp(loser: loserState, now: now)
            var deleted: RecordState? = loserState
            _ = RecordMerge.apply(WireChange(record: loser, entity: entity, kind: .delete), stamps: [WireChange.deleteStampKey: stamp], to: &deleted)
            if let deleted { try transaction.setRecord(loser, deleted) }
            last = try transaction.appendLog(WireChange(record: loser, entity: entity, kind: .delete, stamps: [WireChange.deleteStampKey: stamp.description],
                                                        mergedInto: survivor), schemaVersion: schemaVersion)
            try transaction.setMerged(loser, MergedRecord(survivor: survivor, stamp: stamp, state: loserState))
            // The survivor holds its values, the carried ones too (which may meet a third record).
            try settle(survivor, entity, old: unique.keys(of: survivorBefore), new: unique.keys(of: survivorState), claimAll: true)
        }

        // References to records of unique entities, which a merge may have taken away.
        var mergeableReferences: [String: [(column: String, destination: String)]] = [:]
        if !unique.attributes.isEmpty {
            for entity in schema.entities {
                let targets = entity.relationships.filter { !$0.isToMany && unique.hasUniqueValues($0.destination) }.map { (column: $0.name, destination: $0.destination) }
                if !targets.isEmpty { mergeableReferences[entity.name] = targets }
            }
        }

        /// Where a change stamped `stamp` that names `uri` goes: the last survivor of the merges
        /// that took `uri` (merged into a record merged in turn, and so on); `nil` when none
        /// takes it (never merged, or made again at or before the stamp: the new record's).
        func survivor(of uri: String, stampedAt stamp: HLCTimestamp) throws -> String? {
            guard let first = try transaction.mergedInto(uri), first.takes(stamp) else { return nil }
            var survivor = first.survivor
            var hops = 0
            while hops < 16, let next = try transaction.mergedInto(survivor), next.takes(stamp) {
                survivor = next.survivor
                hops += 1
            }
            return survivor
        }

        /// After a change is applied: each reference it set to a record merged into another
        /// (`rewrites`), still the record's value, points at the survivor, by an update with
        /// a server stamp just after the one sent, logged after the change. Every replica,
        /// the one that wrote it too (its store holds the loser's id), takes the survivor's.
        /// The change itself is applied as sent: a newer stamp on it would make an insert
        /// newer than a delete it lost to.
        func rewriteReferences(_ uri: String, _ entity: String,
                               _ rewrites: [(column: String, loser: String, survivor: String, stamp: HLCTimestamp)]) throws {
            guard !rewrites.isEmpty, let before = try transaction.record(uri), !before.isDeleted else { return }
            var values: [String: WireValue] = [:]
            var stamps: [String: HLCTimestamp] = [:]
            for rewrite in rewrites where before.fields[rewrite.column] == RecordState.Field(value: .text(rewrite.loser), stamp: rewrite.stamp) {
                values[rewrite.column] = .text(rewrite.survivor)
                // Just after the sent stamp (node 0): the writer takes it, and an edit of the
                // column made later elsewhere still wins, whenever it arrives.
                stamps[rewrite.column] = UniqueMerge.stamp(after: rewrite.stamp, now: 0)
            }
            guard !values.isEmpty else { return }
            var state: RecordState? = before
            let merged = RecordMerge.apply(WireChange(record: uri, entity: entity, kind: .update, values: values), stamps: stamps, to: &state)
            if let state, state != before { try transaction.setRecord(uri, state) }
            guard !merged.applied.isEmpty else { return }
            last = try transaction.appendLog(WireChange(record: uri, entity: entity, kind: .update, values: merged.applied.mapValues(\.value),
                                                        stamps: merged.applied.mapValues(\.stamp.description)).compacted(), schemaVersion: schemaVersion)
            isEcho = false
        }

        for (index, (sent, changeStamps)) in zip(changes, stamps).enumerated() {
            var change = sent
            // References to records merged into others, pointed at their survivors once the
            // change is applied (``rewriteReferences``).
            var rewrites: [(column: String, loser: String, survivor: String, stamp: HLCTimestamp)] = []
            if change.kind == .insert || change.kind == .update, let targets = mergeableReferences[change.entity] {
                for (column, destination) in targets {
                    guard case .text(let id)? = change.values[column], let sentStamp = changeStamps[column],
                          let merged = try survivor(of: "tandem://\(datasetName)/\(destination)/\(id)", stampedAt: sentStamp),
                          let survivor = RecordURI(merged)?.id, survivor != id else { continue }
                    rewrites.append((column, id, survivor, sentStamp))
                }
            }
            // A record the server has never seen, made by an insert: everything it sent is
            // applied, and it was created at its creation stamp (``creation(of:_:)``, what
            // RecordMerge decides, without building the merge's dictionaries). Tried before the
            // record is looked up.
            let creation = change.kind == .insert ? Self.creation(of: change, changeStamps) : nil
            if change.kind == .insert, let created = creation,
               try transaction.insertNewRecord(change.record, entity: change.entity, values: change.values, stamps: changeStamps, created: created) {
                // A compact insert's one stamp is its creation stamp already: logged as sent.
                let compact = change.stamps.count == 1 && change.stamps[WireChange.deleteStampKey] != nil
                let position = try log({ var applied = change; applied.setCreationStamp(created.description); return applied }(),
                                       whole: true, index: index, sent: change, created: compact ? nil : created, canonical: canonical, to: &transaction)
                last = position
                outcome(index, position: position, applied: change.values.keys.sorted(), lost: [])
                if unique.hasUniqueValues(change.entity) {
                    touch(change.record, change.entity, old: [], new: unique.keys(of: change.entity, values: change.values), isNew: true)
                }
                try rewriteReferences(change.record, change.entity, rewrites)
                continue
            }
            // A record merged into another: its later changes are the survivor's. An insert
            // newer than the merge makes it a record of its own again; a link made before
            // that, by a replica that had not heard of the merge, still goes to the survivor
            // (that replica moved it there when it applied the merge).
            var redirected = false
            // Made again after a merge took it: the links it had then went to the survivor on
            // the replicas that applied the merge; unlinked after the insert for any replica
            // that did not (one whose own record with this id is newer than the merge).
            var remadeAfterMerge: (state: RecordState?, stamp: HLCTimestamp)?
            // An insert's by its creation (see ``creation(of:_:)``), as RecordMerge dates it.
            let newest = creation ?? changeStamps.values.max() ?? .zero
            if unique.hasUniqueValues(change.entity), change.kind != .delete, let merged = try transaction.mergedInto(change.record),
               merged.remade == nil || (change.kind.isLink && merged.takes(newest)) {
                let reinserted = change.kind == .insert && newest > merged.stamp
                if reinserted {
                    remadeAfterMerge = (merged.state, merged.stamp)
                    var remade = merged
                    remade.remade = newest
                    try transaction.setMerged(change.record, remade)
                } else if change.kind == .update, let loser = merged.state {
                    // An edit made before its maker learned of the merge that changes the
                    // unique value the two records shared frees it: the loser lives again,
                    // as it was with the edit, as if the edit had reached the server first.
                    var edited: RecordState? = loser
                    let applied = RecordMerge.apply(change, stamps: changeStamps, to: &edited)
                    if var revived = edited, !applied.applied.isEmpty, unique.keys(of: revived) != unique.keys(of: loser) {
                        let current = try transaction.record(change.record) ?? loser
                        let stamp = UniqueMerge.mergeStamp(loser: current, now: now)
                        revived.created = stamp
                        revived.deleted = nil
                        try transaction.setRecord(change.record, revived)
                        try transaction.setMerged(change.record, nil)
                        var insert = WireChange(record: change.record, entity: change.entity, kind: .insert, values: revived.values.mapValues(\.value),
                                                stamps: revived.values.mapValues(\.stamp.description))
                        insert.setCreationStamp(stamp.description)
                        let position = try transaction.appendLog(insert, schemaVersion: schemaVersion)
                        last = position
                        isEcho = false
                        outcome(index, position: position, applied: applied.applied.keys.sorted(), lost: applied.lost)
                        touch(change.record, change.entity, old: [], new: unique.keys(of: revived))
                        continue
                    }
                }
                if !reinserted {
                    change.record = try survivor(of: change.record, stampedAt: newest) ?? merged.survivor
                    if change.kind == .insert { change.kind = .update }
                    redirected = true
                    isEcho = false
                }
            }
            // A link or an unlink: one field of its record, `<relationship>#<member>`, true
            // while linked, merged by stamp like any value (the later wins).
            if var field = change.linkField, let stamp = changeStamps.values.first {
                var state = try transaction.record(change.record)
                if let existing = state, existing.entity != change.entity {
                    throw APIError.invalid("invalid_record", "\(change.record) is a \(existing.entity), not a \(change.entity)")
                }
                // The member: a record merged into another is linked as its survivor.
                guard let (relationship, member) = change.values.first, case .text(var id) = member,
                      let destination = schema.entity(named: change.entity)?.relationship(named: relationship)?.destination else { continue }
                var memberURI = "tandem://\(datasetName)/\(destination)/\(id)"
                if unique.hasUniqueValues(destination), let survivor = try survivor(of: memberURI, stampedAt: stamp) {
                    memberURI = survivor
                    id = RecordURI(memberURI)?.id ?? id
                    change.values = [relationship: .text(id)]
                    field = relationship + "#" + id
                    redirected = true
                    isEcho = false
                }
                // A link to a record deleted here (or never pushed) loses to the delete, as an
                // update of it would: replicas clear a record's links when they apply its
                // delete, so the link would live only where it was made.
                // So does a link older than the member's newest delete, though the member lives
                // again: replicas dropped the link with the delete.
                if change.kind == .link {
                    let memberState = try transaction.record(memberURI)
                    var losesTo: String?   // the winning delete's stamp
                    // The end that is deleted (`.some(nil)`: one the server never had).
                    let gone = [state, memberState].first(where: { $0?.isDeleted ?? true })
                    if let gone {
                        losesTo = gone?.deleted?.description ?? ""
                    } else if let deleted = memberState?.deleted, deleted >= stamp,
                              // Unless the owner holds this link already, made after that delete
                              // (elsewhere): this older one changes nothing, and its maker keeps
                              // the row the newer one keeps everywhere.
                              !(state?.holds(field, .bool(true), newerThan: deleted) ?? false) {
                        losesTo = deleted.description
                    }
                    if let losesTo {
                        // Newer than the delete it meets, the link is kept (neither applied nor
                        // logged) and comes back with the record (``linksRevived``), as when it
                        // arrived before the delete: arrival order cannot matter.
                        if let owner = state, let deleted = gone??.deleted, stamp > deleted {
                            var kept: RecordState? = owner
                            _ = RecordMerge.apply(WireChange(record: change.record, entity: change.entity, kind: .update, values: [field: .bool(true)]),
                                                  stamps: [field: stamp], to: &kept)
                            if let kept, kept != owner {
                                try transaction.setRecord(change.record, kept)
                                try transaction.addLinkOwner(change.record, field: field, member: memberURI)
                            }
                        }
                        let lost = LostValue(attribute: field, value: .bool(true), stamp: stamp.description,
                                             winningValue: .null, winningStamp: losesTo, toDelete: true)
                        try transaction.recordLost(lost, record: change.record, position: nil, at: now)
                        outcome(index, position: nil, applied: [], lost: [lost])
                        continue
                    }
                }
                let before = state
                let merged = RecordMerge.apply(WireChange(record: change.record, entity: change.entity, kind: .update, values: [field: .bool(change.kind == .link)]),
                                               stamps: [field: stamp], to: &state)
                if let state, state != before { try transaction.setRecord(change.record, state) }
                var position: Int64?
                if !merged.applied.isEmpty {
                    position = try log(change, whole: !redirected, index: index, sent: sent, created: nil, canonical: canonical, to: &transaction)
                    last = position!
                    if change.kind == .link { try transaction.addLinkOwner(change.record, field: field, member: memberURI) }
                }
                for lost in merged.lost { try transaction.recordLost(lost, record: change.record, position: position, at: now) }
                outcome(index, position: position, applied: merged.applied.keys.sorted(), lost: merged.lost)
                continue
            }
            var state = try transaction.record(change.record)
            if let existing = state, existing.entity != change.entity {
                throw APIError.invalid("invalid_record", "\(change.record) is a \(existing.entity), not a \(change.entity)")
            }
            let before = state
            let merged = RecordMerge.apply(change, stamps: changeStamps, created: creation, to: &state)
            var position: Int64?
            // Saved whenever it changed: a value newer than a delete is kept even when it
            // is not applied (the record stays deleted), so arrival order cannot matter.
            if let state, state != before {
                try transaction.setRecord(change.record, state)
            }
            if !merged.applied.isEmpty {
                // Only what the change sent, value for value and stamp for stamp? A re-insert
                // brings back values kept while the record was deleted (a column the change
                // carries too may hold a newer value from elsewhere), and an insert of a
                // record created later elsewhere carries that creation stamp.
                let sentOnly = change.kind == .delete
                    || merged.applied.allSatisfy { change.values[$0.key] == $0.value.value && changeStamps[$0.key] == $0.value.stamp }
                var applied = change
                // Everything it sent applied: the change itself (a stamp's text is canonical,
                // the only form the reader accepts), logged from the push's own text.
                let whole = sentOnly && merged.applied.count == max(change.values.count, 1) && !redirected
                if !whole {
                    applied.values = change.kind == .delete ? [:] : merged.applied.mapValues(\.value)
                    applied.stamps = merged.applied.mapValues(\.stamp.description)
                    if change.kind == .update { applied = applied.compacted() }
                }
                let created = change.kind == .insert ? state?.created : nil
                if let created { applied.setCreationStamp(created.description) }
                position = try log(applied, whole: whole, index: index, sent: change, created: created, canonical: canonical, to: &transaction)
                last = position!
                switch change.kind {
                case .delete, .link, .unlink: break
                case .update: if !sentOnly { isEcho = false }
                case .insert: if !sentOnly || state?.created != creation { isEcho = false }
                }
            }
            if let restore = merged.restore, !restore.isEmpty {
                var restored = WireChange(record: change.record, entity: change.entity, kind: .insert,
                                          values: restore.mapValues(\.value), stamps: restore.mapValues(\.stamp.description))
                if let created = state?.created { restored.setCreationStamp(created.description) }
                last = try transaction.appendLog(restored, schemaVersion: schemaVersion)
                isEcho = false
            }
            if let after = state, linkOwnerEntities.contains(change.entity) || linkMemberEntities.contains(change.entity) {
                if let remade = remadeAfterMerge {
                    try linksDied(change.record, change.entity, before: remade.state, deleted: remade.stamp)
                }
                if let deleted = after.deleted, deleted != before?.deleted {
                    try linksDied(change.record, change.entity, before: before, deleted: deleted)
                }
                if !after.isDeleted, before?.isDeleted == true || merged.restore != nil {
                    try linksRevived(change.record, change.entity, state: after)
                }
            }
            for lost in merged.lost {
                try transaction.recordLost(lost, record: change.record, position: position, at: now)
            }
            outcome(index, position: position, applied: merged.applied.keys.sorted(), lost: merged.lost)
            if unique.hasUniqueValues(change.entity) {
                touch(change.record, change.entity, old: unique.keys(of: before), new: unique.keys(of: state))
            }
            try rewriteReferences(change.record, change.entity, rewrites)
        }
        // Every value the push's records gave up is free before any is claimed.
        for record in touched {
            for key in record.old where !record.new.contains(key) { try transaction.releaseUnique(entity: record.entity, key: key, record: record.uri) }
        }
        for record in touched {
            // A merge earlier in this loop may have changed or deleted it: then it is read
            // again, and claims all it holds.
            if anyMerge {
                try settle(record.uri, record.entity, old: [], new: unique.keys(of: try transaction.record(record.uri)))
            } else {
                try settle(record.uri, record.entity, old: record.old, new: record.new)
            }
        }
        // Position 0 is the start, which clients hold as the empty cursor (as `after=`).
        let cursor = { (position: Int64) in position == 0 ? "" : Cursor(dataset: datasetID, position: position).text }
        result.response.echo = isEcho ? PushEcho(from: cursor(before), to: cursor(last)) : nil
        return result
    }
}

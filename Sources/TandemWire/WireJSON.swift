public import Foundation
public import TandemSchema

/// A fast JSON writer for the wire types: the same JSON their `Codable` conformances produce
/// (members in sorted order, so the text is canonical), without `JSONEncoder`'s generic
/// machinery. The server writes log entries and answers inside its one write transaction,
/// where `JSONEncoder` was a third of its CPU.
///
/// ```swift
/// let data = WireJSON.data { $0.append(response) }    // == JSONEncoder (sortedKeys) semantics
/// ```
public struct WireJSON {
    /// The UTF-8 bytes written so far.
    public private(set) var bytes: [UInt8] = []

    /// The text written so far.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    public init() {
        bytes.reserveCapacity(256)
    }

    /// Builds JSON text with `body` and returns its UTF-8 bytes.
    public static func data(_ body: (inout WireJSON) -> Void) -> Data {
        var writer = WireJSON()
        body(&writer)
        return Data(writer.bytes)
    }

    /// Makes room for `count` bytes in all, so a large answer is not copied as it grows.
    public mutating func reserveCapacity(_ count: Int) {
        bytes.reserveCapacity(count)
    }

    /// Empties the buffer, keeping its capacity for the next text.
    public mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
    }

    /// Appends JSON text as it is.
    public mutating func raw(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Appends JSON text as it is.
    public mutating func raw(_ text: String) {
        var text = text
        text.withUTF8 { bytes.append(contentsOf: $0) }
    }

    public mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            var clean = utf8.startIndex
            for index in utf8.indices {
                let unit = utf8[index]
                guard unit < 0x20 || unit == 0x22 || unit == 0x5C else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[clean..<index]))
                clean = index + 1
                switch unit {
                case 0x22: bytes += [0x5C, 0x22]
                case 0x5C: bytes += [0x5C, 0x5C]
                case 0x0A: bytes += [0x5C, UInt8(ascii: "n")]
                case 0x0D: bytes += [0x5C, UInt8(ascii: "r")]
                case 0x09: bytes += [0x5C, UInt8(ascii: "t")]
                default:
                    let hex = Array("0123456789abcdef".utf8)
                    bytes += [0x5C, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(unit >> 4)], hex[Int(unit & 0xF)]]
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[clean...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    public mutating func number(_ value: Int64) {
        if value == .min { raw("-9223372036854775808"); return }
        var magnitude = value.magnitude
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var digits:
            (
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
            ) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[19 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            bytes.append(contentsOf: buffer[(20 - count)...])
        }
    }

    /// An object whose members are written by `members`, called with the sorted keys.
    ///
    /// Inlinable, so callers in other modules get it specialized for their value type (the
    /// generic version built tuple metadata at run time for every member it sorted).
    @inlinable
    public mutating func object<Value>(_ dictionary: [String: Value], _ value: (inout WireJSON, Value) -> Void) {
        raw("{")
        var first = true
        for element in dictionary.sorted(by: { $0.key < $1.key }) {
            if first { first = false } else { raw(",") }
            string(element.key)
            raw(":")
            value(&self, element.value)
        }
        raw("}")
    }

    @inlinable
    public mutating func array<Element>(_ elements: [Element], _ element: (inout WireJSON, Element) -> Void) {
        raw("[")
        var first = true
        for item in elements {
            if first { first = false } else { raw(",") }
            element(&self, item)
        }
        raw("]")
    }

    /// Appends a stamp as a JSON string (its ``HLCTimestamp/description``), without making
    /// the string first: a snapshot page writes one or more per record.
    ///
    /// ```swift
    /// json.stamp(HLCTimestamp(physical: 1, counter: 0, node: 2))   // "000000000001-0000-0000000000000002"
    /// ```
    public mutating func stamp(_ stamp: HLCTimestamp) {
        guard stamp.hasFixedWidthText else { return string(stamp.description) }
        // The 36 bytes made on the stack and appended at once.
        var text: (UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &text) { buffer in
            buffer[0] = UInt8(ascii: "\"")
            stamp.writeText(into: buffer, at: 1)
            buffer[35] = UInt8(ascii: "\"")
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[0..<36]))
        }
    }

    public mutating func append(_ value: WireValue) {
        switch value {
        case .null: raw("null")
        case .bool(let flag): if flag { raw("true") } else { raw("false") }
        case .integer(let integer): number(integer)
        case .real(let real): if real.isFinite { raw(real.description) } else { raw("null") }
        case .text(let string): self.string(string)
        case .bytes(let data):
            raw("{\"bytes\":")
            string(data.base64EncodedString())
            raw("}")
        }
    }

    public mutating func append(_ change: WireChange) {
        appendChange(change)
    }

    /// Appends a change; returns where its stamps' first member starts in ``bytes`` (just
    /// after `"stamps":{`), where a server splices the record's creation stamp.
    @discardableResult
    mutating func appendChange(_ change: WireChange) -> Int {
        raw("{\"entity\":")
        string(change.entity)
        raw(",\"kind\":")
        string(change.kind.rawValue)
        if let loser = change.mergedFrom {
            raw(",\"mergedFrom\":")
            string(loser)
        }
        if let survivor = change.mergedInto {
            raw(",\"mergedInto\":")
            string(survivor)
        }
        raw(",\"record\":")
        string(change.record)
        raw(",\"stamps\":")
        let stamps = bytes.count + 1
        object(change.stamps) { $0.string($1) }
        raw(",\"values\":")
        object(change.values) { $0.append($1) }
        raw("}")
        return stamps
    }

    /// Where one change of a push lies in its canonical text (see
    /// ``append(_:spans:)``).
    public struct ChangeSpan: Sendable, Hashable {
        /// The change's JSON object.
        public var range: Range<Int>
        /// Where its stamps' first member starts.
        public var stamps: Int
    }

    /// Appends a push request (as ``append(_:)-(PushRequest)`` does) and records where each
    /// change lies, so the server can log a change applied whole from these bytes instead of
    /// writing it again.
    public mutating func append(_ request: PushRequest, spans: inout [ChangeSpan]) {
        spans.removeAll(keepingCapacity: true)
        spans.reserveCapacity(request.changes.count)
        raw("{\"changes\":[")
        for (index, change) in request.changes.enumerated() {
            if index > 0 { raw(",") }
            let start = bytes.count
            let stamps = appendChange(change)
            spans.append(ChangeSpan(range: start..<bytes.count, stamps: stamps))
        }
        raw("]")
        appendOutcomeDetail(request.outcomes)
        appendResync(request.resync)
        raw(",\"schemaVersion\":")
        number(Int64(request.schemaVersion))
        raw("}")
    }

    public mutating func append(_ lost: LostValue) {
        raw("{\"attribute\":")
        string(lost.attribute)
        raw(",\"stamp\":")
        string(lost.stamp)
        if lost.toDelete { raw(",\"toDelete\":true") }
        raw(",\"value\":")
        append(lost.value)
        raw(",\"winningStamp\":")
        string(lost.winningStamp)
        raw(",\"winningValue\":")
        append(lost.winningValue)
        raw("}")
    }

    public mutating func append(_ response: PushResponse) {
        raw("{")
        if let count = response.changeCount {
            raw("\"changes\":")
            number(Int64(count))
            raw(",")
        }
        if let echo = response.echo {
            raw("\"echo\":{\"from\":")
            string(echo.from)
            raw(",\"to\":")
            string(echo.to)
            raw("},")
        }
        raw("\"outcomes\":")
        array(response.outcomes) { writer, outcome in
            writer.raw("{\"applied\":")
            writer.array(outcome.applied) { $0.string($1) }
            if let index = outcome.index {
                writer.raw(",\"index\":")
                writer.number(Int64(index))
            }
            writer.raw(",\"lost\":")
            writer.array(outcome.lost) { $0.append($1) }
            if let position = outcome.position {
                writer.raw(",\"position\":")
                writer.number(position)
            }
            writer.raw("}")
        }
        raw(",\"serverTime\":")
        number(response.serverTime)
        raw("}")
    }

    public mutating func append(_ request: PushRequest) {
        raw("{\"changes\":")
        array(request.changes) { $0.append($1) }
        appendOutcomeDetail(request.outcomes)
        appendResync(request.resync)
        raw(",\"schemaVersion\":")
        number(Int64(request.schemaVersion))
        raw("}")
    }

    /// A push request's `"outcomes"` member, after its changes (keys in order): written
    /// only for ``PushRequest/OutcomeDetail/lost``, so a request that asks for every
    /// outcome reads and hashes the same with or without it.
    public mutating func appendOutcomeDetail(_ detail: PushRequest.OutcomeDetail?) {
        guard detail == .lost else { return }
        raw(",\"outcomes\":\"lost\"")
    }

    /// A push request's `"resync"` member, after `"outcomes"`: written only when `true`, so
    /// a request without it reads and hashes the same as before it existed.
    public mutating func appendResync(_ resync: Bool?) {
        guard resync == true else { return }
        raw(",\"resync\":true")
    }

    public mutating func append(_ entry: LogEntry) {
        logEntry(position: entry.position, schemaVersion: entry.schemaVersion) { $0.append(entry.change) }
    }

    /// A log entry whose change is written by `change` (the server splices stored JSON).
    public mutating func logEntry(position: Int64, schemaVersion: Int, change: (inout WireJSON) -> Void) {
        raw("{\"change\":")
        change(&self)
        raw(",\"position\":")
        number(position)
        raw(",\"schemaVersion\":")
        number(Int64(schemaVersion))
        raw("}")
    }

    public mutating func append(_ response: PullResponse) {
        var entries = WireJSON()
        entries.array(response.changes) { $0.append($1) }
        pullResponse(entries: entries.bytes, hasMore: response.hasMore, nextCursor: response.nextCursor, serverTime: response.serverTime)
    }

    /// A pull answer around an already written JSON array of log entries.
    public mutating func pullResponse(entries: [UInt8], hasMore: Bool, nextCursor: String, serverTime: Int64) {
        raw(Self.pullResponseHead)
        bytes.append(contentsOf: entries)
        pullResponseTail(hasMore: hasMore, nextCursor: nextCursor, serverTime: serverTime)
    }

    /// What a pull answer starts with, before its entries' JSON array.
    public static let pullResponseHead: StaticString = "{\"changes\":"

    /// What a pull answer ends with, after its entries' JSON array: a server that has the
    /// entries in a buffer of their own writes head, entries and tail into its answer without
    /// copying the entries twice.
    public mutating func pullResponseTail(hasMore: Bool, nextCursor: String, serverTime: Int64) {
        raw(",\"hasMore\":")
        if hasMore { raw("true") } else { raw("false") }
        raw(",\"nextCursor\":")
        string(nextCursor)
        raw(",\"serverTime\":")
        number(serverTime)
        raw("}")
    }

    /// Appends bytes that are already JSON (a stored change).
    public mutating func rawJSON(_ json: some Sequence<UInt8>) {
        bytes.append(contentsOf: json)
    }
}

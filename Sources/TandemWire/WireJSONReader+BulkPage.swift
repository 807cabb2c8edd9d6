public import Foundation
import TandemSchema

extension WireJSONReader {
    /// Reads a pull answer (a snapshot page) as a ``BulkPage``: a plain insert of a record
    /// of an entity in `shapes` (kind `insert`, a `"*"` stamp, every column of the shape and
    /// no other, a canonical URI of `dataset`, no escapes in its names) is read into a
    /// ``BulkPage/Row`` without building a change; any other entry is read as
    /// ``pullResponse(_:)`` reads it, with the same errors.
    ///
    /// ```swift
    /// let page = try WireJSONReader.bulkPage(body, dataset: "todos", shapes: shapes)
    /// ```
    ///
    /// - Throws: ``WireDecodingError`` naming the path and the problem.
    public static func bulkPage(_ data: Data, dataset: String, shapes: [BulkPage.Shape]) throws(WireDecodingError) -> BulkPage {
        let prefix = Array("tandem://\(dataset)/".utf8)
        return try read(data) { (reader: inout WireJSONReader) throws(WireDecodingError) in
            var items: [BulkPage.Item]?
            var next: String?
            var hasMore: Bool?
            var serverTime: Int64?
            try reader.object { (reader: inout WireJSONReader, key: String) throws(WireDecodingError) in
                switch key {
                case "changes":
                    items = try reader.array { (reader: inout WireJSONReader) throws(WireDecodingError) in try reader.bulkItem(prefix: prefix, shapes: shapes) }
                case "nextCursor": next = try reader.string()
                case "hasMore": hasMore = try reader.bool()
                case "serverTime": serverTime = try reader.int64()
                default: try reader.skipValue(depth: 0)
                }
            }
            guard let items, let next, let hasMore, let serverTime else {
                throw reader.error("missing key: a pull answer has changes, nextCursor, hasMore and serverTime")
            }
            return BulkPage(items: items, hasMore: hasMore, nextCursor: next, serverTime: serverTime)
        }
    }

    /// The `hasMore` and `nextCursor` of a pull answer, read without reading its changes (they
    /// are stepped over, not checked): a client asks for the next page while it reads this
    /// one. `nil` when the answer does not have that form; reading it whole says what is wrong.
    ///
    /// ```swift
    /// if let next = WireJSONReader.pageContinuation(body), next.hasMore { fetch(after: next.nextCursor) }
    /// ```
    public static func pageContinuation(_ data: Data) -> (hasMore: Bool, nextCursor: String)? {
        try? read(data) { (reader: inout WireJSONReader) throws(WireDecodingError) in
            var next: String?
            var hasMore: Bool?
            try reader.object { (reader: inout WireJSONReader, key: String) throws(WireDecodingError) in
                switch key {
                case "nextCursor": next = try reader.string()
                case "hasMore": hasMore = try reader.bool()
                case "changes": guard reader.stepOverArray() else { throw reader.error("not an array") }
                default: try reader.skipValue(depth: 0)
                }
            }
            guard let next, let hasMore else { throw reader.error("no continuation") }
            return (hasMore, next)
        }
    }

    /// Steps over an array, minding only brackets and strings (their escapes): `false` when
    /// there is no array here or it does not end.
    mutating func stepOverArray() -> Bool {
        guard peek() == UInt8(ascii: "[") else { return false }
        var depth = 0
        var inString = false
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if inString {
                if byte == UInt8(ascii: "\\") {
                    index += 1
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"): depth += 1
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                depth -= 1
                if depth == 0 { return true }
            default: break
            }
        }
        return false
    }

    /// A log entry: a row when its change is a plain insert of a shaped entity, else the entry.
    mutating func bulkItem(prefix: [UInt8], shapes: [BulkPage.Shape]) throws(WireDecodingError) -> BulkPage.Item {
        var position: Int64?
        var version: Int?
        var change: WireChange?
        var row: BulkPage.Row?
        try object { (reader: inout WireJSONReader, key: String) throws(WireDecodingError) in
            switch key {
            case "position": position = try reader.int64()
            case "schemaVersion": version = try reader.int()
            case "change":
                let start = reader.index
                let depth = reader.path.count
                if let plain = reader.plainInsert(prefix: prefix, shapes: shapes) {
                    row = plain
                } else {
                    reader.index = start
                    reader.path.removeSubrange(depth...)
                    change = try reader.change()
                }
            default: try reader.skipValue(depth: 0)
            }
        }
        guard let position, let version, change != nil || row != nil else { throw error("missing key: a log entry has position, schemaVersion and change") }
        if var row {
            row.position = position
            row.schemaVersion = version
            return .row(row)
        }
        return .entry(LogEntry(position: position, change: change!, schemaVersion: version))
    }

    /// A plain insert read as a row, or `nil` (where the reader stopped does not matter: the
    /// caller reads the change again) for anything else, malformed JSON included.
    mutating func plainInsert(prefix: [UInt8], shapes: [BulkPage.Shape]) -> BulkPage.Row? {
        var shapeIndex: Int?
        var isInsert = false
        var id: String?
        var created: HLCTimestamp?
        var stamps: [(column: Int, stamp: HLCTimestamp)] = []
        var values: [WireValue] = []
        var filled: UInt64 = 0
        var sawValues = false
        let read = plainObject { (reader: inout WireJSONReader, key: Range<Int>) -> Bool in
            switch key.count {
            case 6 where reader.equals(key, "entity"):
                guard shapeIndex == nil, let name = reader.plainString() else { return false }
                shapeIndex = shapes.firstIndex { reader.equals(name, $0.entityBytes) }
                return shapeIndex != nil
            case 4 where reader.equals(key, "kind"):
                guard !isInsert, let kind = reader.plainString(), reader.equals(kind, "insert") else { return false }
                isInsert = true
                return true
            case 6 where reader.equals(key, "record"):
                guard id == nil, let shapeIndex, let record = reader.plainString() else { return false }
                id = reader.recordID(record, prefix: prefix, entity: shapes[shapeIndex].entityBytes)
                return id != nil
            case 6 where reader.equals(key, "stamps"):
                guard created == nil, let shapeIndex, shapes[shapeIndex].columns.count <= 64 else { return false }
                let shape = shapes[shapeIndex]
                var seen: UInt64 = 0
                let read = reader.plainObject { (reader: inout WireJSONReader, name: Range<Int>) -> Bool in
                    guard let text = reader.plainString(), let stamp = HLCTimestamp(utf8: UnsafeBufferPointer(rebasing: reader.bytes[text])) else {
                        return false
                    }
                    if reader.equals(name, "*") {
                        guard created == nil else { return false }
                        created = stamp
                    } else {
                        guard let column = reader.column(name, of: shape, hint: stamps.last.map { $0.column + 1 } ?? 0), seen & (1 << column) == 0
                        else { return false }
                        seen |= 1 << column
                        stamps.append((column, stamp))
                    }
                    return true
                }
                return read && created != nil
            case 6 where reader.equals(key, "values"):
                guard !sawValues, let shapeIndex, shapes[shapeIndex].columns.count <= 64 else { return false }
                sawValues = true
                let shape = shapes[shapeIndex]
                values = Array(repeating: .null, count: shape.columns.count)
                var hint = 0
                return reader.plainObject { (reader: inout WireJSONReader, name: Range<Int>) -> Bool in
                    guard let column = reader.column(name, of: shape, hint: hint), filled & (1 << column) == 0, let value = try? reader.value() else {
                        return false
                    }
                    filled |= 1 << column
                    values[column] = value
                    hint = column + 1
                    return true
                }
            default: return false
            }
        }
        guard read, let shapeIndex, isInsert, let id, let created, sawValues, filled.nonzeroBitCount == shapes[shapeIndex].columns.count else { return nil }
        return BulkPage.Row(shape: shapeIndex, id: id, values: values, created: created, stamps: stamps, position: 0, schemaVersion: 0)
    }

    /// Reads an object whose member names are plain strings, handing each name's range to
    /// `member` (the reader at its value, which `member` reads); `false` as soon as `member`
    /// says so or the object is anything else.
    private mutating func plainObject(_ member: (inout WireJSONReader, Range<Int>) -> Bool) -> Bool {
        guard next() == UInt8(ascii: "{") else { return false }
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            index += 1
            return true
        }
        while true {
            skipWhitespace()
            guard let name = plainString() else { return false }
            skipWhitespace()
            guard next() == UInt8(ascii: ":") else { return false }
            skipWhitespace()
            guard member(&self, name) else { return false }
            skipWhitespace()
            switch next() {
            case UInt8(ascii: ","): continue
            case UInt8(ascii: "}"): return true
            default: return false
            }
        }
    }

    /// A string with no escapes, as the range of its bytes (without the quotes); `nil` for
    /// anything else.
    private mutating func plainString() -> Range<Int>? {
        guard next() == UInt8(ascii: "\"") else { return nil }
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return start..<(index - 1)
            }
            guard byte >= 0x20, byte != UInt8(ascii: "\\"), byte < 0x80 else { return nil }
            index += 1
        }
        return nil
    }

    private func equals(_ range: Range<Int>, _ text: StaticString) -> Bool {
        range.count == text.utf8CodeUnitCount && memcmp(bytes.baseAddress! + range.lowerBound, text.utf8Start, range.count) == 0
    }

    private func equals(_ range: Range<Int>, _ other: [UInt8]) -> Bool {
        range.count == other.count && other.withUnsafeBufferPointer { memcmp(bytes.baseAddress! + range.lowerBound, $0.baseAddress!, range.count) == 0 }
    }

    /// The index of the column named by `range`, tried first at `hint` (names usually come in
    /// the shape's order).
    private func column(_ range: Range<Int>, of shape: BulkPage.Shape, hint: Int) -> Int? {
        if hint < shape.columnBytes.count, equals(range, shape.columnBytes[hint]) { return hint }
        return shape.columnBytes.firstIndex { equals(range, $0) }
    }

    /// The lowercase UUID of a canonical record URI of `prefix` (`tandem://<dataset>/`) and
    /// `entity`; `nil` otherwise.
    private func recordID(_ range: Range<Int>, prefix: [UInt8], entity: [UInt8]) -> String? {
        let idStart = range.lowerBound + prefix.count + entity.count + 1
        guard range.count == prefix.count + entity.count + 1 + 36,
            equals(range.lowerBound..<(range.lowerBound + prefix.count), prefix),
            equals((range.lowerBound + prefix.count)..<(idStart - 1), entity),
            bytes[idStart - 1] == UInt8(ascii: "/")
        else { return nil }
        for offset in 0..<36 {
            let byte = bytes[idStart + offset]
            switch offset {
            case 8, 13, 18, 23:
                guard byte == UInt8(ascii: "-") else { return nil }
            default:
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte) else { return nil }
            }
        }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[idStart..<(idStart + 36)]), as: UTF8.self)
    }
}

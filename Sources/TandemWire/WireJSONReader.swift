public import Foundation

/// Reads protocol v1 messages straight from JSON bytes into wire types, without
/// `JSONDecoder`: a push of 1 000 changes is read about ten times faster, which is most of
/// what a push costs the server. It accepts exactly what `JSONDecoder` accepts for these
/// types, with two differences: a repeated key is refused instead of silently keeping one
/// of them, and a number's form decides its kind (`3` is an integer, `3.0` and `3e0` are
/// reals, where `JSONDecoder` would read an integer).
///
/// ```swift
/// let push = try WireJSONReader.pushRequest(body)   // or throws WireDecodingError
/// print(push.changes.count)
/// ```
///
/// Errors name the path of the faulty value (`changes[3].values.title`) and what was expected.
public struct WireJSONReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0
    /// Where the reader is, for error messages. Kept as keys and indexes and turned into
    /// text only for an error: building `.key` and `[n]` strings for every value was a
    /// large share of reading a pull answer.
    var path: [PathComponent] = []
    /// The keys of the objects being read, innermost last (see ``object(_:)``).
    var seenKeys: [String] = []

    enum PathComponent {
        case key(String)
        case index(Int)
    }

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// Reads a ``PushRequest``.
    ///
    /// - Throws: ``WireDecodingError`` naming the path and the problem.
    public static func pushRequest(_ data: Data) throws(WireDecodingError) -> PushRequest {
        try read(data) { (reader: inout WireJSONReader) throws(WireDecodingError) in try reader.pushRequest() }
    }

    /// Reads a ``PullResponse``.
    ///
    /// - Throws: ``WireDecodingError`` naming the path and the problem.
    public static func pullResponse(_ data: Data) throws(WireDecodingError) -> PullResponse {
        try read(data) { (reader: inout WireJSONReader) throws(WireDecodingError) in try reader.pullResponse() }
    }

    /// Reads a ``PushResponse``.
    ///
    /// - Throws: ``WireDecodingError`` naming the path and the problem.
    public static func pushResponse(_ data: Data) throws(WireDecodingError) -> PushResponse {
        try read(data) { (reader: inout WireJSONReader) throws(WireDecodingError) in try reader.pushResponse() }
    }

    /// Reads a JSON object of strings, like a row's column stamps (`{"title": "…"}`).
    ///
    /// - Throws: ``WireDecodingError`` naming the path and the problem.
    public static func stringMap(_ text: String) throws(WireDecodingError) -> [String: String] {
        var text = text
        let result: Result<[String: String], WireDecodingError> = text.withUTF8 { bytes in
            var reader = WireJSONReader(bytes)
            do throws(WireDecodingError) {
                reader.skipWhitespace()
                var map: [String: String] = [:]
                try reader.object { (reader: inout WireJSONReader, key: String) throws(WireDecodingError) in map[key] = try reader.string() }
                reader.skipWhitespace()
                guard reader.index == reader.bytes.count else { throw reader.error("unexpected data after the JSON value") }
                return .success(map)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Reads one ``WireChange`` (as the server's log stores them).
    ///
    /// - Throws: ``WireDecodingError`` naming the path and the problem.
    public static func change(_ data: Data) throws(WireDecodingError) -> WireChange {
        try read(data) { (reader: inout WireJSONReader) throws(WireDecodingError) in try reader.change() }
    }

    static func read<T>(_ data: Data, _ body: (inout WireJSONReader) throws(WireDecodingError) -> T) throws(WireDecodingError) -> T {
        let result: Result<T, WireDecodingError> = data.withUnsafeBytes { raw in
            var reader = WireJSONReader(raw.bindMemory(to: UInt8.self))
            do throws(WireDecodingError) {
                reader.skipWhitespace()
                let value = try body(&reader)
                reader.skipWhitespace()
                guard reader.index == reader.bytes.count else { throw reader.error("unexpected data after the JSON value") }
                return .success(value)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    // MARK: Messages

    mutating func pushRequest() throws(WireDecodingError) -> PushRequest {
        var version: Int?
        var changes: [WireChange]?
        var outcomes: PushRequest.OutcomeDetail?
        var resync: Bool?
        try object { (reader: inout WireJSONReader, key: String) throws(WireDecodingError) in
            switch key {
            case "resync": resync = try reader.bool()
            case "schemaVersion": version = try reader.int()
            case "changes": changes = try reader.array { (reader: inout WireJSONReader) throws(WireDecodingError) in try reader.change() }
            case "outcomes":
                let text = try reader.string()
                guard let detail = PushRequest.OutcomeDetail(rawValue: text) else {
                    throw reader.error("'\(text)' is not an outcome detail; expected \"all\" or \"lost\"")
                }
                outcomes = detail
            default: try reader.skipValue(depth: 0)
            }
        }
        guard let version else { throw error("missing key 'schemaVersion'") }
        guard let changes else { throw error("missing key 'changes'") }
        return PushRequest(schemaVersion: version, changes: changes, outcomes: outcomes, resync: resync == true ? true : nil)
    }

    mutating func pullResponse() throws(WireDecodingError) -> PullResponse {
        var changes: [LogEntry]?
        var next: String?
        var hasMore: Bool?
        var serverTime: Int64?
        try object { (reader: inout WireJSONReader, key: String) throws(WireDecodingError) in
            switch key {
            case "changes": changes = try reader.array { (reader: inout WireJSONReader) throws(WireDecodingError) in try reader.logEntry() }
            case "nextCursor": next = try reader.string()
            case "hasMore": hasMore = try reader.bool()
            case "serverTime": serverTime = try reader.int64()
            default: try reader.skipValue(depth: 0)
            }
        }
        guard let changes, let next, let hasMore, let serverTime else {
            throw error("missing key: a pull answer has changes, nextCursor, hasMore and serverTime")
        }
        return PullResponse(changes: changes, nextCursor: next, hasMore: hasMore, serverTime: serverTime)
    }

    mutating func pushResponse() throws(WireDecodingError) -> PushResponse {
        var outcomes: [ChangeOutcome]?
        var changeCount: Int?
        var serverTime: Int64?
        var echo: PushEcho?
        try object { (reader: inout WireJSONReader, key: String) throws(WireDecodingError) in
            switch key {
            case "outcomes": outcomes = try reader.array { (reader: inout WireJSONReader) throws(WireDecodingError) in try reader.outcome() }
            case "changes": changeCount = try reader.int()
            case "serverTime": serverTime = try reader.int64()
            case "echo": echo = try reader.echo()
            default: try reader.skipValue(depth: 0)
            }
        }
        guard let outcomes, let serverTime else { throw error("missing key: a push answer has outcomes and serverTime") }
        return PushResponse(outcomes: outcomes, changeCount: changeCount, serverTime: serverTime, echo: echo)
    }

    mutating func echo() throws(WireDecodingError) -> PushEcho? {
        if peek() == UInt8(ascii: "n") {
            try literal("null")
            return nil
        }
        var from: String?
        var to: String?
        try object { (reader: inout WireJSONReader, key: String) throws(WireDecodingError) in
            switch key {
            case "from": from = try reader.string()
            case "to": to = try reader.string()
            default: try reader.skipValue(depth: 0)
            }
        }
        guard let from, let to else { throw error("missing key: a push's echo has from and to") }
        return PushEcho(from: from, to: to)
    }

    mutating func outcome() throws(WireDecodingError) -> ChangeOutcome {
        var index: Int?
        var position: Int64?
        var applied: [String]?
        var lost: [LostValue]?
        try object { (reader: inout WireJSONReader, key: String) throws(WireDecodingError) in
            switch key {
            case "position":
                if reader.peek() == UInt8(ascii: "n") { try reader.literal("null") } else { position = try reader.int64() }
            case "index": index = try reader.int()
            case "applied": applied = try reader.array { (reader: inout WireJSONReader) throws(WireDecodingError) in try reader.string() }
            case "lost": lost = try reader.array { (reader: inout WireJSONReader) throws(WireDecodingError) in try reader.lostValue() }
            default: try reader.skipValue(depth: 0)
            }
        }
        guard let applied, let lost else { throw error("missing key: an outcome has applied and lost") }
        return ChangeOutcome(index: index, position: position, applied: applied, lost: lost)
    }

    mutating func lostValue() throws(WireDecodingError) -> LostValue {
        var attribute: String?, value: WireValue?, stamp: String?, winningValue: WireValue?, winningStamp: String?, toDelete = false
        try object { (reader: inout WireJSONReader, key: String) throws(WireDecodingError) in
            switch key {
            case "toDelete": toDelete = try reader.bool()
            case "attribute": attribute = try reader.string()
            case "value": value = try reader.value()
            case "stamp": stamp = try reader.string()
            case "winningValue": winningValue = try reader.value()
            case "winningStamp": winningStamp = try reader.string()
            default: try reader.skipValue(depth: 0)
            }
        }
        guard let attribute, let value, let stamp, let winningValue, let winningStamp else {
            throw error("missing key: a lost value has attribute, value, stamp, winningValue and winningStamp")
        }
        return LostValue(attribute: attribute, value: value, stamp: stamp, winningValue: winningValue, winningStamp: winningStamp, toDelete: toDelete)
    }

    mutating func logEntry() throws(WireDecodingError) -> LogEntry {
        var position: Int64?
        var version: Int?
        var change: WireChange?
        try object { (reader: inout WireJSONReader, key: String) throws(WireDecodingError) in
            switch key {
            case "position": position = try reader.int64()
            case "schemaVersion": version = try reader.int()
            case "change": change = try reader.change()
            default: try reader.skipValue(depth: 0)
            }
        }
        guard let position, let version, let change else { throw error("missing key: a log entry has position, schemaVersion and change") }
        return LogEntry(position: position, change: change, schemaVersion: version)
    }

    mutating func change() throws(WireDecodingError) -> WireChange {
        var record: String?
        var entity: String?
        var kind: WireChange.Kind?
        var mergedInto: String?
        var mergedFrom: String?
        var values: [String: WireValue] = [:]
        var stamps: [String: String] = [:]
        var sawValues = false
        var sawStamps = false
        try object { (reader: inout WireJSONReader, key: String) throws(WireDecodingError) in
            switch key {
            case "record": record = try reader.string()
            case "entity": entity = try reader.string()
            case "kind":
                let text = try reader.string()
                guard let parsed = WireChange.Kind(rawValue: text) else { throw reader.error("'\(text)' is not a kind; use insert, update, delete, link or unlink") }
                kind = parsed
            case "mergedInto": mergedInto = try reader.string()
            case "mergedFrom": mergedFrom = try reader.string()
            case "values":
                sawValues = true
                try reader.object { (reader: inout WireJSONReader, name: String) throws(WireDecodingError) in values[name] = try reader.value() }
            case "stamps":
                sawStamps = true
                try reader.object { (reader: inout WireJSONReader, name: String) throws(WireDecodingError) in stamps[name] = try reader.string() }
            default: try reader.skipValue(depth: 0)
            }
        }
        guard let record else { throw error("missing key 'record'") }
        guard let entity else { throw error("missing key 'entity'") }
        guard let kind else { throw error("missing key 'kind'") }
        guard sawValues else { throw error("missing key 'values'") }
        guard sawStamps else { throw error("missing key 'stamps'") }
        return WireChange(record: record, entity: entity, kind: kind, values: values, stamps: stamps, mergedInto: mergedInto, mergedFrom: mergedFrom)
    }

    /// null, a boolean, a number (an integer when it has no fraction or exponent and fits
    /// 64 bits), a string, or `{"bytes": base64}`.
    mutating func value() throws(WireDecodingError) -> WireValue {
        switch peek() {
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "\""): return .text(try string())
        case UInt8(ascii: "{"):
            var data: Data?
            try object { (reader: inout WireJSONReader, key: String) throws(WireDecodingError) in
                guard key == "bytes" else { throw reader.error("an object value is {\"bytes\": base64}; '\(key)' is not allowed") }
                let text = try reader.string()
                guard let decoded = Data(base64Encoded: text) else { throw reader.error("bytes must be base64") }
                data = decoded
            }
            guard let data else { throw error("an object value is {\"bytes\": base64}") }
            return .bytes(data)
        default:
            switch try number() {
            case .integer(let value): return .integer(value)
            case .real(let value): return .real(value)
            }
        }
    }

    // MARK: Structure

    mutating func object(_ member: (inout WireJSONReader, String) throws(WireDecodingError) -> Void) throws(WireDecodingError) {
        try expect(UInt8(ascii: "{"), "an object")
        skipWhitespace()
        if peek() == UInt8(ascii: "}") { index += 1; return }
        // Repeated keys are refused. Wire objects have a handful of keys: a linear search
        // beats hashing them until there are many. The keys seen are kept on one stack for
        // every object being read (an array per object was an allocation per change).
        let base = seenKeys.count
        defer { seenKeys.removeSubrange(base...) }
        var seenSet: Set<String> = []
        while true {
            skipWhitespace()
            guard peek() == UInt8(ascii: "\"") else { throw error("expected a key in quotes") }
            let key = try string()
            if seenKeys.count - base < 16 {
                guard !seenKeys[base...].contains(key) else { throw error("the key '\(key)' appears twice") }
                seenKeys.append(key)
                if seenKeys.count - base == 16 { seenSet = Set(seenKeys[base...]) }
            } else {
                guard seenSet.insert(key).inserted else { throw error("the key '\(key)' appears twice") }
            }
            skipWhitespace()
            try expect(UInt8(ascii: ":"), "':' after the key")
            skipWhitespace()
            path.append(.key(key))
            try member(&self, key)
            path.removeLast()
            skipWhitespace()
            switch next() {
            case UInt8(ascii: ","): continue
            case UInt8(ascii: "}"): return
            default: index -= 1; throw error("expected ',' or '}' in an object")
            }
        }
    }

    mutating func array<T>(_ element: (inout WireJSONReader) throws(WireDecodingError) -> T) throws(WireDecodingError) -> [T] {
        try expect(UInt8(ascii: "["), "an array")
        skipWhitespace()
        var result: [T] = []
        if peek() == UInt8(ascii: "]") { index += 1; return result }
        while true {
            skipWhitespace()
            path.append(.index(result.count))
            result.append(try element(&self))
            path.removeLast()
            skipWhitespace()
            switch next() {
            case UInt8(ascii: ","): continue
            case UInt8(ascii: "]"): return result
            default: index -= 1; throw error("expected ',' or ']' in an array")
            }
        }
    }

    mutating func skipValue(depth: Int) throws(WireDecodingError) {
        guard depth < 64 else { throw error("nested more than 64 levels deep") }
        switch peek() {
        case UInt8(ascii: "{"):
            try object { (reader: inout WireJSONReader, _: String) throws(WireDecodingError) in try reader.skipValue(depth: depth + 1) }
        case UInt8(ascii: "["):
            _ = try array { (reader: inout WireJSONReader) throws(WireDecodingError) in try reader.skipValue(depth: depth + 1) }
        case UInt8(ascii: "\""): _ = try string()
        case UInt8(ascii: "n"): try literal("null")
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        default: _ = try number()
        }
    }

    // MARK: Scalars

    mutating func bool() throws(WireDecodingError) -> Bool {
        switch peek() {
        case UInt8(ascii: "t"): try literal("true"); return true
        case UInt8(ascii: "f"): try literal("false"); return false
        default: throw error("expected a boolean")
        }
    }

    mutating func int64() throws(WireDecodingError) -> Int64 {
        guard case .integer(let value) = try number() else { throw error("expected a whole number that fits 64 bits") }
        return value
    }

    mutating func int() throws(WireDecodingError) -> Int {
        let value = try int64()
        guard let result = Int(exactly: value) else { throw error("the number is out of range") }
        return result
    }

    enum Number { case integer(Int64), real(Double) }

    mutating func number() throws(WireDecodingError) -> Number {
        let start = index
        if peek() == UInt8(ascii: "-") { index += 1 }
        guard let first = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else {
            index = start
            throw error(index < bytes.count ? "expected a value" : "the JSON ends too early")
        }
        index += 1
        if first != UInt8(ascii: "0") { skipDigits() }
        var integral = true
        if peek() == UInt8(ascii: ".") {
            integral = false
            index += 1
            guard skipDigits() > 0 else { throw error("expected digits after '.'") }
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            integral = false
            index += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
            guard skipDigits() > 0 else { throw error("expected digits in the exponent") }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        if integral, let value = Int64(text) { return .integer(value) }
        guard let value = Double(text), value.isFinite else { throw error("the number \(text.prefix(40)) is not a finite 64-bit number") }
        return .real(value)
    }

    @discardableResult
    mutating func skipDigits() -> Int {
        let start = index
        while let byte = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { index += 1 }
        return index - start
    }

    mutating func string() throws(WireDecodingError) -> String {
        try expect(UInt8(ascii: "\""), "a string")
        let start = index
        // Fast path: no escapes; plain ASCII needs no UTF-8 validation.
        var ascii = true
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<index])
                index += 1
                if ascii { return String(decoding: slice, as: UTF8.self) }
                guard let text = String(validating: slice, as: UTF8.self) else { throw error("a string is not valid UTF-8") }
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { throw error("a control character must be escaped in a string") }
            if byte >= 0x80 { ascii = false }
            index += 1
        }
        var scalars = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = String(validating: scalars, as: UTF8.self) else { throw error("a string is not valid UTF-8") }
                return text
            case UInt8(ascii: "\\"):
                guard let escape = next() else { break }
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scalars.append(escape)
                case UInt8(ascii: "b"): scalars.append(0x08)
                case UInt8(ascii: "f"): scalars.append(0x0C)
                case UInt8(ascii: "n"): scalars.append(0x0A)
                case UInt8(ascii: "r"): scalars.append(0x0D)
                case UInt8(ascii: "t"): scalars.append(0x09)
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if (0xD800..<0xDC00).contains(code) {
                        guard next() == UInt8(ascii: "\\"), next() == UInt8(ascii: "u") else { throw error("a high surrogate must be followed by a low one") }
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw error("a high surrogate must be followed by a low one") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw error("\\u escape of a lone surrogate") }
                    scalars.append(contentsOf: Array(String(Character(scalar)).utf8))
                default: throw error("unknown escape '\\\(Character(Unicode.Scalar(escape)))'")
                }
            default:
                guard byte >= 0x20 else { throw error("a control character must be escaped in a string") }
                scalars.append(byte)
            }
        }
        throw error("a string is not closed")
    }

    mutating func hex4() throws(WireDecodingError) -> UInt32 {
        var code: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = next(), let digit = Character(Unicode.Scalar(byte)).hexDigitValue else { throw error("expected 4 hex digits after \\u") }
            code = code << 4 | UInt32(digit)
        }
        return code
    }

    mutating func literal(_ word: StaticString) throws(WireDecodingError) {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count,
            memcmp(bytes.baseAddress! + index, word.utf8Start, count) == 0
        else { throw error("expected a value") }
        index += count
    }

    // MARK: Bytes

    func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func next() -> UInt8? {
        guard index < bytes.count else { return nil }
        defer { index += 1 }
        return bytes[index]
    }

    mutating func expect(_ byte: UInt8, _ what: String) throws(WireDecodingError) {
        guard peek() == byte else { throw error(index < bytes.count ? "expected \(what)" : "the JSON ends too early; expected \(what)") }
        index += 1
    }

    mutating func skipWhitespace() {
        while let byte = peek(), byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
    }

    func error(_ message: String) -> WireDecodingError {
        var text = ""
        for component in path {
            switch component {
            case .key(let key): text += text.isEmpty ? key : "." + key
            case .index(let index): text += "[\(index)]"
            }
        }
        return WireDecodingError(path: text, offset: index, message: message)
    }
}

/// Why a wire message could not be read: where (the path of the value and the byte offset)
/// and what was expected.
public struct WireDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The value's path, like `changes[3].values.title`; empty at the top level.
    public var path: String
    /// The byte offset in the body.
    public var offset: Int
    public var message: String

    public var description: String {
        path.isEmpty ? "at byte \(offset): \(message)" : "\(path) (byte \(offset)): \(message)"
    }
}

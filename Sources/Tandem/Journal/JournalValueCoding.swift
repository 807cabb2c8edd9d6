internal import GRDBSQLite

/// The binary form of a history change's `values` column (journal values format 1).
///
/// SQL functions build it inside the triggers, far faster than text: converting numbers to
/// text (JSON) doubled the cost of an insert. Layout: one version byte (`1`), then per
/// column its name (LEB128 length + UTF-8), a type byte and the value — `0` NULL, `1`
/// INTEGER (8 bytes little-endian), `2` REAL (IEEE 754 bits, 8 bytes little-endian),
/// `3` TEXT and `4` BLOB (LEB128 length + bytes). Values read back bit for bit.
enum JournalValueCoding {
    static let version: UInt8 = 1

    /// SQLite functions take at most 127 arguments: wider tables chain calls, each one's
    /// first argument being the previous one's result (or NULL).
    static let columnsPerCall = 40

    /// `tandem_journal_values(prefix, name1, value1, name2, value2, …)`.
    static let pack: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = { context, count, arguments in
        JournalValueCoding.encode(context, count, arguments, flagged: false)
    }

    /// `tandem_journal_changes(prefix, changed1, name1, value1, …)`: only the columns whose flag is true.
    static let packChanged: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = { context, count, arguments in
        JournalValueCoding.encode(context, count, arguments, flagged: true)
    }

    static func encode(_ context: OpaquePointer?, _ count: Int32, _ arguments: UnsafeMutablePointer<OpaquePointer?>?, flagged: Bool) {
        let step = flagged ? 3 : 2
        guard count >= 1, Int(count - 1) % step == 0 else {
            return sqlite3_result_error(context, "tandem journal values need a prefix and \(step) arguments per column", -1)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256)
        let prefix = arguments![0]
        if sqlite3_value_type(prefix) == SQLITE_BLOB, sqlite3_value_bytes(prefix) > 0, let blob = sqlite3_value_blob(prefix) {
            bytes.append(contentsOf: UnsafeRawBufferPointer(start: blob, count: Int(sqlite3_value_bytes(prefix))))
        } else {
            bytes.append(version)
        }
        var index = 1
        while index < Int(count) {
            defer { index += step }
            if flagged && sqlite3_value_int(arguments![index]) == 0 { continue }
            let name = arguments![flagged ? index + 1 : index], value = arguments![flagged ? index + 2 : index + 1]
            append(text: name, to: &bytes)
            switch sqlite3_value_type(value) {
            case SQLITE_INTEGER:
                bytes.append(1)
                withUnsafeBytes(of: sqlite3_value_int64(value).littleEndian) { bytes.append(contentsOf: $0) }
            case SQLITE_FLOAT:
                bytes.append(2)
                withUnsafeBytes(of: sqlite3_value_double(value).bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
            case SQLITE_TEXT:
                bytes.append(3)
                append(text: value, to: &bytes)
            case SQLITE_BLOB:
                bytes.append(4)
                let length = Int(sqlite3_value_bytes(value))
                appendLength(length, to: &bytes)
                if length > 0, let blob = sqlite3_value_blob(value) {
                    bytes.append(contentsOf: UnsafeRawBufferPointer(start: blob, count: length))
                }
            default:
                bytes.append(0)
            }
        }
        bytes.withUnsafeBytes { sqlite3_result_blob(context, $0.baseAddress, Int32($0.count), sqliteTransient) }
    }

    /// The SQL that calls `function` over `arguments` (one group of SQL expressions per
    /// column), chaining calls to stay under SQLite's argument limit; the first call's first
    /// argument is `seed`.
    static func sql(_ function: String, _ arguments: [String], seed: String = "NULL") -> String {
        var expression = seed
        var start = 0
        repeat {
            let chunk = arguments[start..<min(arguments.count, start + columnsPerCall)]
            expression = "\(function)(\(([expression] + chunk).joined(separator: ", ")))"
            start += columnsPerCall
        } while start < arguments.count
        return expression
    }

    private static func append(text value: OpaquePointer?, to bytes: inout [UInt8]) {
        let text = sqlite3_value_text(value)
        let length = Int(sqlite3_value_bytes(value))
        appendLength(length, to: &bytes)
        if length > 0, let text { bytes.append(contentsOf: UnsafeBufferPointer(start: text, count: length)) }
    }

    private static func appendLength(_ length: Int, to bytes: inout [UInt8]) {
        var rest = UInt(length)
        while rest >= 0x80 {
            bytes.append(UInt8(rest & 0x7f) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    /// Decodes a `values` blob; `nil` when it is malformed.
    static func decode(_ data: Data) -> [String: HistoryValue]? {
        data.withUnsafeBytes { raw -> [String: HistoryValue]? in
            let bytes = raw.bindMemory(to: UInt8.self)
            guard bytes.first == version else { return nil }
            var position = 1
            var result: [String: HistoryValue] = [:]
            func length() -> Int? {
                var value = 0, shift = 0
                while position < bytes.count, shift < 63 {
                    let byte = bytes[position]
                    position += 1
                    value |= Int(byte & 0x7f) << shift
                    if byte & 0x80 == 0 { return position + value <= bytes.count ? value : nil }
                    shift += 7
                }
                return nil
            }
            func eight() -> UInt64? {
                guard position + 8 <= bytes.count else { return nil }
                var value: UInt64 = 0
                for i in 0..<8 { value |= UInt64(bytes[position + i]) << (8 * i) }
                position += 8
                return value
            }
            func text() -> String? {
                guard let count = length() else { return nil }
                defer { position += count }
                return String(decoding: UnsafeBufferPointer(rebasing: bytes[position..<position + count]), as: UTF8.self)
            }
            while position < bytes.count {
                guard let name = text(), position < bytes.count else { return nil }
                let type = bytes[position]
                position += 1
                switch type {
                case 0: result[name] = .null
                case 1: guard let bits = eight() else { return nil }; result[name] = .integer(Int64(bitPattern: bits))
                case 2: guard let bits = eight() else { return nil }; result[name] = .real(Double(bitPattern: bits))
                case 3: guard let value = text() else { return nil }; result[name] = .text(value)
                case 4:
                    guard let count = length() else { return nil }
                    result[name] = .blob(Data(UnsafeRawBufferPointer(rebasing: raw[position..<position + count])))
                    position += count
                default: return nil
                }
            }
            return result
        }
    }
}

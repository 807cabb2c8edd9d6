/// Fast conversion between `UUID` and its lowercase 36-character text form, the form Tandem
/// stores in `#id` and foreign-key columns and writes in URIs.
enum UUIDText {
    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Calls `body` with a pointer to the 36 ASCII bytes of `uuid` (not NUL-terminated).
    @inline(__always)
    static func withText<R>(_ uuid: UUID, _ body: (UnsafePointer<CChar>) -> R) -> R {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 36) { out in
            withUnsafeBytes(of: uuid.uuid) { bytes in
                var j = 0
                for i in 0..<16 {
                    if i == 4 || i == 6 || i == 8 || i == 10 { out[j] = 45; j += 1 }  // '-'
                    out[j] = CChar(bitPattern: hexDigits[Int(bytes[i] >> 4)])
                    out[j + 1] = CChar(bitPattern: hexDigits[Int(bytes[i] & 0x0f)])
                    j += 2
                }
            }
            return body(UnsafePointer(out.baseAddress!))
        }
    }

    /// The lowercase text form.
    static func string(_ uuid: UUID) -> String {
        withText(uuid) { pointer in
            pointer.withMemoryRebound(to: UInt8.self, capacity: 36) {
                String(decoding: UnsafeBufferPointer(start: $0, count: 36), as: UTF8.self)
            }
        }
    }

    /// Parses 36 bytes of `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` (either case).
    @inline(__always)
    static func parse(_ text: UnsafeBufferPointer<UInt8>) -> UUID? {
        guard text.count == 36 else { return nil }
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let ok = withUnsafeMutableBytes(of: &bytes) { out -> Bool in
            var j = 0
            for i in 0..<16 {
                if i == 4 || i == 6 || i == 8 || i == 10 {
                    guard text[j] == 45 else { return false }
                    j += 1
                }
                guard let high = nibble(text[j]), let low = nibble(text[j + 1]) else { return false }
                out[i] = high << 4 | low
                j += 2
            }
            return true
        }
        return ok ? UUID(uuid: bytes) : nil
    }

    static func parse(_ string: String) -> UUID? {
        var string = string
        return string.withUTF8 { parse($0) }
    }

    /// Hex digit values by ASCII code; 0xFF for anything else.
    private static let nibbles: [UInt8] = (0..<256).map { c in
        switch c {
        case 48...57: UInt8(c - 48)
        case 97...102: UInt8(c - 87)
        case 65...70: UInt8(c - 55)
        default: 0xFF
        }
    }

    @inline(__always)
    private static func nibble(_ c: UInt8) -> UInt8? {
        let value = nibbles[Int(c)]
        return value == 0xFF ? nil : value
    }
}

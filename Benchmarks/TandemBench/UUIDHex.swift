import Tandem

/// Hand-rolled UUID ⇄ lowercase text for the raw C competitor (no `String` round trip).
enum UUIDHex {
    private static let digits:
        (
            UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
            UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
        ) =
            (48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 97, 98, 99, 100, 101, 102)

    /// Calls `body` with the 36 ASCII bytes of `uuid` (not NUL-terminated).
    @inline(__always)
    static func withText<R>(_ uuid: UUID, _ body: (UnsafePointer<CChar>) -> R) -> R {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 36) { out in
            withUnsafeBytes(of: uuid.uuid) { bytes in
                withUnsafeBytes(of: digits) { hex in
                    var j = 0
                    for i in 0..<16 {
                        if i == 4 || i == 6 || i == 8 || i == 10 { out[j] = 45; j += 1 }
                        out[j] = CChar(bitPattern: hex[Int(bytes[i] >> 4)])
                        out[j + 1] = CChar(bitPattern: hex[Int(bytes[i] & 0x0f)])
                        j += 2
                    }
                }
            }
            return body(UnsafePointer(out.baseAddress!))
        }
    }

    /// Parses `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`.
    @inline(__always)
    static func parse(_ text: UnsafePointer<UInt8>, count: Int) -> UUID? {
        guard count == 36 else { return nil }
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

    @inline(__always)
    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 48...57: c - 48
        case 97...102: c - 87
        case 65...70: c - 55
        default: nil
        }
    }
}

import Crypto

/// SHA-256 digests as lowercase hex, over apple/swift-crypto: API tokens' secrets are stored
/// as one, and every push is keyed by the one of its canonical text.
///
/// ```swift
/// SHA256Hex.of(Array("abc".utf8))   // "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
/// SHA256Hex.matches(Array("abc".utf8), hex: "ba7816bf…")   // compared in constant time
/// ```
enum SHA256Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// The digest of `message` as 64 lowercase hex digits.
    static func of(_ message: [UInt8]) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for byte in SHA256.hash(data: message) {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Whether `hex` is the digest of `message`, compared in time that does not depend on
    /// where they differ (swift-crypto's digest comparison); `false` for text that is not
    /// 64 hex digits.
    static func matches(_ message: [UInt8], hex: String) -> Bool {
        guard let expected = bytes(hex) else { return false }
        return SHA256.hash(data: message) == expected
    }

    /// 32 bytes from 64 hex digits (either case), or `nil`.
    private static func bytes(_ hex: String) -> [UInt8]? {
        let text = Array(hex.utf8)
        guard text.count == 64 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var result: [UInt8] = []
        result.reserveCapacity(32)
        var index = 0
        while index < 64 {
            guard let high = nibble(text[index]), let low = nibble(text[index + 1]) else { return nil }
            result.append(high << 4 | low)
            index += 2
        }
        return result
    }
}

import Crypto
import Foundation

/// A pull cursor: the last log position returned and its dataset's tag, as opaque text
/// (`c2.` + base64url of 16 bytes).
///
/// The tag is a keyed hash of the dataset's id under the server's cursor key (made with the
/// database and kept in it, so every server on that database makes the same cursors): a
/// cursor works on its own dataset only, and tells nothing about other datasets (their ids,
/// how many there are).
///
/// ```swift
/// let tag = Cursor.tag(of: dataset.id, key: storage.cursorKey)
/// let text = Cursor(tag: tag, position: 42).text      // "c2.…"
/// Cursor(text)?.position                              // 42
/// ```
public struct Cursor: Equatable {
    var tag: UInt64
    var position: Int64

    init(tag: UInt64, position: Int64) {
        self.tag = tag
        self.position = position
    }

    /// Reads a cursor's text; `nil` when it is not one.
    init?(_ text: String) {
        guard text.hasPrefix("c2.") else { return nil }
        var base64 = String(text.dropFirst(3)).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64), data.count == 16 else { return nil }
        let bytes = [UInt8](data)
        let tag = bytes[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let position = Int64(bitPattern: bytes[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        guard position >= 0 else { return nil }
        self.tag = tag
        self.position = position
    }

    var text: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: tag >> UInt64(shift))) }
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: UInt64(bitPattern: position) >> UInt64(shift))) }
        return "c2."
            + Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// A new cursor key: 32 random bytes, made once with a server's data.
    public static func newKey() -> [UInt8] {
        SymmetricKey(size: .bits256).withUnsafeBytes { [UInt8]($0) }
    }

    /// The tag of `dataset`'s cursors under `key`: the first 8 bytes of HMAC-SHA256 of its id.
    static func tag(of dataset: Int64, key: [UInt8]) -> UInt64 {
        var id = UInt64(bitPattern: dataset).bigEndian
        let code = withUnsafeBytes(of: &id) { HMAC<SHA256>.authenticationCode(for: $0, using: SymmetricKey(data: key)) }
        return code.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }
}

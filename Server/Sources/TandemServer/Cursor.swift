import Crypto
import Foundation

/// A pull cursor: the storage's epoch, its dataset's tag and the last log position returned,
/// as opaque text (`c3.` + base64url of 24 bytes).
///
/// The tag is a keyed hash of the dataset's id under the server's cursor key (made with the
/// database and kept in it, so every server on that database makes the same cursors): a
/// cursor works on its own dataset only, and tells nothing about other datasets (their ids,
/// how many there are).
///
/// The epoch names one history of the storage's logs: a restore from a backup, a copy to
/// another database or `tandem-server storage new-epoch` starts a new one, because positions
/// after the restored head may then be written again with other changes. A cursor of another
/// epoch is refused (409 `cursor_epoch`) and its client resyncs, rather than skipping the
/// new changes at positions it believes it has seen.
///
/// ```swift
/// let scope = Cursor.Scope(dataset: dataset.id, key: storage.cursorKey, epoch: storage.epoch)
/// let text = Cursor(scope, position: 42).text      // "c3.…"
/// Cursor(text)?.position                           // 42
/// ```
public struct Cursor: Equatable {
    /// What a cursor of one dataset in one epoch carries besides its position.
    public struct Scope: Equatable, Sendable {
        var epoch: UInt64
        var tag: UInt64

        init(epoch: UInt64, tag: UInt64) {
            self.epoch = epoch
            self.tag = tag
        }

        /// The scope of `dataset`'s cursors under `key` in `epoch`.
        public init(dataset: Int64, key: [UInt8], epoch: UInt64) {
            self.init(epoch: epoch, tag: Cursor.tag(of: dataset, key: key))
        }
    }

    var scope: Scope
    var position: Int64

    init(_ scope: Scope, position: Int64) {
        self.scope = scope
        self.position = position
    }

    /// Reads a cursor's text; `nil` when it is not one.
    init?(_ text: String) {
        guard text.hasPrefix("c3.") else { return nil }
        var base64 = String(text.dropFirst(3)).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64), data.count == 24 else { return nil }
        let bytes = [UInt8](data)
        func word(_ start: Int) -> UInt64 { bytes[start..<start + 8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
        let position = Int64(bitPattern: word(16))
        guard position >= 0 else { return nil }
        scope = Scope(epoch: word(0), tag: word(8))
        self.position = position
    }

    var text: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        for word in [scope.epoch, scope.tag, UInt64(bitPattern: position)] {
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
        }
        return "c3."
            + Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// A new cursor key: 32 random bytes, made once with a server's data.
    public static func newKey() -> [UInt8] {
        SymmetricKey(size: .bits256).withUnsafeBytes { [UInt8]($0) }
    }

    /// A new epoch: 8 random bytes, never 0.
    public static func newEpoch() -> UInt64 {
        var epoch: UInt64 = 0
        while epoch == 0 { epoch = UInt64.random(in: .min ... .max) }
        return epoch
    }

    /// The tag of `dataset`'s cursors under `key`: the first 8 bytes of HMAC-SHA256 of its id.
    static func tag(of dataset: Int64, key: [UInt8]) -> UInt64 {
        var id = UInt64(bitPattern: dataset).bigEndian
        let code = withUnsafeBytes(of: &id) { HMAC<SHA256>.authenticationCode(for: $0, using: SymmetricKey(data: key)) }
        return code.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }
}

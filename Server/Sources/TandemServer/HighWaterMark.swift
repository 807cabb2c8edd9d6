import Foundation

/// What a SQLite server last knew of its data, kept in a file beside the database
/// (`tandem.sqlite.mark`): the epoch and the bytes its datasets held (a sum that only grows).
///
/// A restore that rewrites the database file in place (`cp backup tandem.sqlite` over the
/// old file, `sqlite3 … ".restore"`) keeps the file's inode and birth time, so
/// ``StorageEpoch`` cannot see it; the data then holds fewer bytes than the mark says, and a
/// new epoch starts. The server writes the mark when it opens the data, at most a second
/// after a write, and when it stops; a restore of the whole data directory (mark included,
/// a filesystem snapshot) needs `tandem-server storage new-epoch`.
///
/// ```swift
/// let mark = HighWaterMark(text: try String(contentsOfFile: path + ".mark"))
/// if let reason = mark?.restored(epoch: epoch, bytes: bytes) { startNewEpoch(reason) }
/// ```
public struct HighWaterMark: Equatable, Sendable {
    public var epoch: UInt64
    public var bytes: Int64

    public init(epoch: UInt64, bytes: Int64) {
        self.epoch = epoch
        self.bytes = bytes
    }

    /// Reads a mark's text (`mark1 EPOCH BYTES`); `nil` when it is not one.
    public init?(text: String) {
        let parts = text.split(whereSeparator: \.isWhitespace)
        guard parts.count == 3, parts[0] == "mark1", let epoch = UInt64(parts[1], radix: 16), let bytes = Int64(parts[2]) else { return nil }
        self.init(epoch: epoch, bytes: bytes)
    }

    public var text: String { "mark1 \(String(epoch, radix: 16)) \(bytes)\n" }

    /// Why data found with `epoch` holding `bytes` is not the data this mark was written
    /// for, `nil` when it may be: it holds fewer bytes (restored from an older copy), or is
    /// of another epoch (restored from before a new epoch started).
    public func restored(epoch: UInt64, bytes: Int64) -> String? {
        if epoch != self.epoch {
            return "the data is of epoch \(String(epoch, radix: 16)), the server last served epoch \(String(self.epoch, radix: 16)): restored from an older copy"
        }
        if bytes < self.bytes {
            return "the data holds \(bytes) bytes of changes, the server had written \(self.bytes): restored from an older copy"
        }
        return nil
    }
}

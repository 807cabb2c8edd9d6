internal import TandemLocking

/// Version-4 UUIDs from a buffer of system randomness.
///
/// `UUID()` on Linux reads `/dev/urandom` once per identifier (about 3 µs, a third of an
/// insert); this draws 4 KiB at a time from `SystemRandomNumberGenerator` (getrandom) and
/// hands out 16 bytes per UUID, setting the version and variant bits as RFC 9562 requires.
///
/// ```swift
/// let id = RandomUUID.next()     // e.g. 3b0f…-4…-[89ab]…
/// ```
enum RandomUUID {
    private static let pool = Locked(Pool())

    private struct Pool {
        var bytes = [UInt8](repeating: 0, count: 4096)
        var offset = 4096

        mutating func take() -> uuid_t {
            if offset + 16 > bytes.count {
                var generator = SystemRandomNumberGenerator()
                bytes.withUnsafeMutableBytes { buffer in
                    let words = buffer.bindMemory(to: UInt64.self)
                    for i in words.indices { words[i] = generator.next() }
                }
                offset = 0
            }
            var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &uuid) { out in
                bytes.withUnsafeBytes { source in
                    out.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[offset..<offset + 16]))
                }
            }
            offset += 16
            uuid.6 = (uuid.6 & 0x0F) | 0x40  // version 4
            uuid.8 = (uuid.8 & 0x3F) | 0x80  // RFC variant
            return uuid
        }
    }

    static func next() -> UUID {
        UUID(uuid: pool.withLock { $0.take() })
    }
}

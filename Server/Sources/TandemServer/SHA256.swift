import CSHA256

/// SHA-256 (FIPS 180-4), for hashing API tokens at rest and pushes for their idempotency
/// keys, without a crypto dependency.
///
/// ```swift
/// SHA256.hex(Array("abc".utf8))   // "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
/// ```
///
/// The blocks run through `CSHA256`: the CPU's SHA extensions where it has them (every push
/// hashes its canonical text, about 60 bytes a change), else portable rounds.
enum SHA256 {
    /// The 32-byte digest of `message`; `accelerated: false` forces the portable rounds
    /// (tests compare both).
    static func hash(_ message: [UInt8], accelerated: Bool = true) -> [UInt8] {
        var data = message
        let bitLength = UInt64(message.count) * 8
        data.append(0x80)
        data.append(contentsOf: repeatElement(0, count: (56 - data.count % 64 + 64) % 64))
        for shift in stride(from: 56, through: 0, by: -8) { data.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift))) }
        var state: [UInt32] = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]
        data.withUnsafeBufferPointer { data in
            state.withUnsafeMutableBufferPointer { state in
                if accelerated {
                    tandem_sha256_blocks(state.baseAddress, data.baseAddress, data.count / 64)
                } else {
                    tandem_sha256_blocks_portable(state.baseAddress, data.baseAddress, data.count / 64)
                }
            }
        }
        return state.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> UInt32(24 - $0 * 8)) } }
    }

    /// The digest as lowercase hex.
    static func hex(_ message: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: hash(message).flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] }, as: UTF8.self)
    }
}

/// A hybrid logical clock (HLC) stamp: physical milliseconds, a counter and a node id.
///
/// Stamps order changes across replicas: by physical time, then counter, then node id, so
/// two different nodes never produce equal stamps and every replica compares them the same
/// way. The text form, `<ms:12 hex>-<counter:4 hex>-<node:16 hex>`, sorts like the stamps
/// themselves, so SQL can compare stamps as strings.
///
/// ```swift
/// let stamp = HLCTimestamp(physical: 1_760_000_000_000, counter: 0, node: 0xABCD)
/// stamp.description            // "0199cc5a4000-0000-000000000000abcd"
/// HLCTimestamp(stamp.description) == stamp   // true
/// ```
public struct HLCTimestamp: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// Milliseconds since 1970 (the physical part; may run ahead of the wall clock).
    public var physical: UInt64
    /// Orders stamps that share a physical millisecond.
    public var counter: UInt16
    /// The writer's node id (one per store file).
    public var node: UInt64

    public init(physical: UInt64, counter: UInt16, node: UInt64) {
        self.physical = physical
        self.counter = counter
        self.node = node
    }

    /// The stamp older than every real stamp (for values written before journaling existed).
    public static let zero = HLCTimestamp(physical: 0, counter: 0, node: 0)

    /// Parses the text form; `nil` when malformed.
    ///
    /// Only the form ``description`` writes is read (lowercase, fixed width), so a parsed
    /// stamp's text is its canonical text.
    public init?(_ text: some StringProtocol) {
        // Read in place: every pulled and pushed value carries a stamp, and copying each
        // into an array was one allocation a stamp.
        let parsed = text.utf8.withContiguousStorageIfAvailable(Self.parse) ?? Array(text.utf8).withUnsafeBufferPointer(Self.parse)
        guard let parsed else { return nil }
        self = parsed
    }

    /// Parses the text form from its UTF-8 bytes (a reader that has them in a buffer);
    /// `nil` when malformed.
    ///
    /// ```swift
    /// let stamp = text.utf8.withContiguousStorageIfAvailable { HLCTimestamp(utf8: $0) }
    /// ```
    public init?(utf8: UnsafeBufferPointer<UInt8>) {
        guard let parsed = Self.parse(utf8) else { return nil }
        self = parsed
    }

    private static func parse(_ utf8: UnsafeBufferPointer<UInt8>) -> HLCTimestamp? {
        guard utf8.count == 34, utf8[12] == UInt8(ascii: "-"), utf8[17] == UInt8(ascii: "-"),
            let physical = hex(utf8[0..<12]), let counter = hex(utf8[13..<17]),
            let node = hex(utf8[18..<34])
        else { return nil }
        return HLCTimestamp(physical: physical, counter: UInt16(counter), node: node)
    }

    public var description: String {
        guard hasFixedWidthText else {
            return Self.pad(physical, 12) + "-" + Self.pad(UInt64(counter), 4) + "-" + Self.pad(node, 16)
        }
        // Written digit by digit: stamps are formatted for every value a push or save writes.
        return String(unsafeUninitializedCapacity: 34) { buffer in
            writeText(into: UnsafeMutableRawBufferPointer(buffer), at: 0)
            return 34
        }
    }

    /// Whether ``description`` has its fixed width (34 characters): a physical part below
    /// 2⁴⁸, as every clock's is until the year 10889.
    public var hasFixedWidthText: Bool { physical < 1 << 48 }

    /// Writes ``description``'s 34 bytes into `buffer` from `start` (a writer that has a
    /// buffer of its own skips making the string). Only for ``hasFixedWidthText`` stamps.
    ///
    /// ```swift
    /// withUnsafeTemporaryAllocation(byteCount: 34, alignment: 1) { stamp.writeText(into: $0, at: 0) }
    /// ```
    public func writeText(into buffer: UnsafeMutableRawBufferPointer, at start: Int) {
        func put(_ value: UInt64, _ width: Int, at start: Int) {
            var value = value
            for offset in stride(from: start + width - 1, through: start, by: -1) {
                let digit = UInt8(truncatingIfNeeded: value & 0xF)
                buffer[offset] = digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10
                value >>= 4
            }
        }
        put(physical, 12, at: start)
        buffer[start + 12] = UInt8(ascii: "-")
        put(UInt64(counter), 4, at: start + 13)
        buffer[start + 17] = UInt8(ascii: "-")
        put(node, 16, at: start + 18)
    }

    public static func < (lhs: HLCTimestamp, rhs: HLCTimestamp) -> Bool {
        (lhs.physical, lhs.counter, lhs.node) < (rhs.physical, rhs.counter, rhs.node)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let stamp = HLCTimestamp(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "'\(text)' is not an HLC stamp (<12 hex>-<4 hex>-<16 hex>)")
        }
        self = stamp
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    /// A node id as stamps write it: 16 hex digits (`00003f2a9c1e77b0`).
    public static func nodeText(_ node: UInt64) -> String { pad(node, 16) }

    private static func pad(_ value: UInt64, _ width: Int) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    private static func hex(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> UInt64? {
        var value: UInt64 = 0
        for byte in bytes {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            default: return nil
            }
            value = value << 4 | UInt64(digit)
        }
        return value
    }
}

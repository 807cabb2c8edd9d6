public import Foundation
import TandemSchema
import TandemWire

/// The binary form of a ``RecordState`` (record state format 1), as the SQLite storage keeps
/// it: every push reads and writes one per change inside the write transaction, where JSON
/// (and `JSONDecoder` for every update) cost more than SQLite did.
///
/// Layout, little-endian: the format byte `0x01`; the entity (LEB128 length + UTF-8); a flags byte
/// (1: created, 2: deleted) followed by those stamps; the field count (LEB128); per field
/// its column name, its stamp and its value. A stamp is physical (8 bytes), counter (2),
/// node (8). A value is a tag — 0 null, 1 false, 2 true, 3 integer (8 bytes), 4 real (IEEE
/// 754 bits, 8 bytes), 5 text and 6 bytes (LEB128 length + bytes) — then its payload.
///
/// ```swift
/// let blob = state.binaryBytes()
/// let again = try RecordState(stored: Data(blob))   // == state
/// ```
extension RecordState {
    static let binaryFormat: UInt8 = 1

    public func binaryBytes() -> [UInt8] {
        var bytes = Self.header(entity: entity, created: created, deleted: deleted, fieldCount: fields.count)
        for (name, field) in fields { Self.append(name, field.stamp, field.value, to: &bytes) }
        return bytes
    }

    /// The binary form of ``init(newRecord:values:stamps:created:)``, written without building
    /// the state (a push of new records writes one per change).
    static func binaryBytes(
        newRecord entity: String, values: [String: WireValue], stamps: [String: HLCTimestamp],
        created: HLCTimestamp
    ) -> [UInt8] {
        var bytes = header(entity: entity, created: created, deleted: nil, fieldCount: values.count)
        for (name, value) in values { append(name, stamps[name] ?? created, value, to: &bytes) }
        return bytes
    }

    private static func header(entity: String, created: HLCTimestamp?, deleted: HLCTimestamp?, fieldCount: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64 + fieldCount * 48)
        bytes.append(binaryFormat)
        append(entity, to: &bytes)
        bytes.append((created == nil ? 0 : 1) | (deleted == nil ? 0 : 2))
        if let created { append(created, to: &bytes) }
        if let deleted { append(deleted, to: &bytes) }
        appendLength(fieldCount, to: &bytes)
        return bytes
    }

    private static func append(_ name: String, _ stamp: HLCTimestamp, _ value: WireValue, to bytes: inout [UInt8]) {
        append(name, to: &bytes)
        append(stamp, to: &bytes)
        switch value {
        case .null: bytes.append(0)
        case .bool(let flag): bytes.append(flag ? 2 : 1)
        case .integer(let integer):
            bytes.append(3)
            withUnsafeBytes(of: integer.littleEndian) { bytes.append(contentsOf: $0) }
        case .real(let real):
            bytes.append(4)
            withUnsafeBytes(of: real.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
        case .text(let text):
            bytes.append(5)
            Self.append(text, to: &bytes)
        case .bytes(let data):
            bytes.append(6)
            Self.appendLength(data.count, to: &bytes)
            bytes.append(contentsOf: data)
        }
    }

    /// Reads a stored state.
    ///
    /// - Throws: ``StorageError/unavailable(_:)`` when the bytes are not a state of this
    ///   format (a damaged database): the push fails and nothing is written.
    public init(stored data: Data) throws {
        self = try data.withUnsafeBytes { try RecordState(stored: $0) }
    }

    /// ``init(stored:)`` from bytes as SQLite hands them over.
    init(stored raw: UnsafeRawBufferPointer) throws {
        var reader = Reader(bytes: raw.bindMemory(to: UInt8.self))
        guard let decoded = reader.state() else {
            throw StorageError.unavailable("a stored record state is damaged (\(raw.count) bytes, format byte \(raw.first.map(String.init) ?? "none"))")
        }
        self = decoded
    }

    private static func appendLength(_ length: Int, to bytes: inout [UInt8]) {
        var rest = UInt64(length)
        repeat {
            let low = UInt8(rest & 0x7F)
            rest >>= 7
            bytes.append(rest == 0 ? low : low | 0x80)
        } while rest != 0
    }

    private static func append(_ text: String, to bytes: inout [UInt8]) {
        var text = text
        text.withUTF8 { utf8 in
            appendLength(utf8.count, to: &bytes)
            bytes.append(contentsOf: utf8)
        }
    }

    private static func append(_ stamp: HLCTimestamp, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: stamp.physical.littleEndian) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: stamp.counter.littleEndian) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: stamp.node.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// Reads the binary form; every read is bounds-checked (`nil`: damaged).
    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        mutating func state() -> RecordState? {
            guard byte() == RecordState.binaryFormat, let entity = text(), let flags = byte(), flags & ~3 == 0 else { return nil }
            var state = RecordState(entity: entity)
            if flags & 1 != 0 { guard let created = stamp() else { return nil }; state.created = created }
            if flags & 2 != 0 { guard let deleted = stamp() else { return nil }; state.deleted = deleted }
            guard let count = length() else { return nil }
            state.fields.reserveCapacity(min(count, (bytes.count - index) / 20))  // a field takes at least 20 bytes
            for _ in 0..<count {
                guard let name = text(), let stamp = stamp(), let value = value() else { return nil }
                state.fields[name] = Field(value: value, stamp: stamp)
            }
            return index == bytes.count ? state : nil
        }

        mutating func byte() -> UInt8? {
            guard index < bytes.count else { return nil }
            defer { index += 1 }
            return bytes[index]
        }

        mutating func fixed<T: FixedWidthInteger>(_ type: T.Type) -> T? {
            let size = MemoryLayout<T>.size
            guard bytes.count - index >= size else { return nil }
            // One unaligned load: copying through slices looked up generic metadata per
            // value, a sixth of reading a snapshot page.
            let value = UnsafeRawPointer(bytes.baseAddress! + index).loadUnaligned(as: T.self)
            index += size
            return T(littleEndian: value)
        }

        mutating func length() -> Int? {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while let byte = byte() {
                guard shift < 63 else { return nil }
                value |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return value <= UInt64(bytes.count) ? Int(value) : nil }
                shift += 7
            }
            return nil
        }

        mutating func raw() -> UnsafeBufferPointer<UInt8>? {
            guard let count = length(), bytes.count - index >= count else { return nil }
            defer { index += count }
            return UnsafeBufferPointer(rebasing: bytes[index..<(index + count)])
        }

        mutating func text() -> String? {
            guard let raw = raw() else { return nil }
            // Names and most values are ASCII, which needs no validating.
            if raw.allSatisfy({ $0 < 0x80 }) { return String(decoding: raw, as: UTF8.self) }
            return String(validating: raw, as: UTF8.self)
        }

        mutating func stamp() -> HLCTimestamp? {
            guard let physical = fixed(UInt64.self), let counter = fixed(UInt16.self), let node = fixed(UInt64.self) else { return nil }
            return HLCTimestamp(physical: physical, counter: counter, node: node)
        }

        mutating func value() -> WireValue? {
            switch byte() {
            case 0: return .null
            case 1: return .bool(false)
            case 2: return .bool(true)
            case 3: return fixed(Int64.self).map { .integer($0) }
            case 4: return fixed(UInt64.self).map { .real(Double(bitPattern: $0)) }
            case 5: return text().map { .text($0) }
            case 6: return raw().map { .bytes(Data($0)) }
            default: return nil
            }
        }
    }
}

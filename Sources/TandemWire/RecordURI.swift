/// A record's URI, `tandem://<dataset>/<Entity>/<uuid>`, read from its UTF-8 bytes.
///
/// ```swift
/// let uri = RecordURI("tandem://todos/Todo/6F1C5D0E-8A4B-4C55-9B43-3F6C1F7A2B10")
/// uri?.entity   // "Todo"
/// uri?.text     // "tandem://todos/Todo/6f1c5d0e-8a4b-4c55-9b43-3f6c1f7a2b10"
/// ```
///
/// The id must be a UUID in its 8-4-4-4-12 hex form, in either case; it is kept in lowercase.
/// This reader is stricter than Foundation's `UUID(uuidString:)`, which accepts some
/// malformed ids, and much faster: it runs for every change a server receives and every
/// change a replica pulls.
public struct RecordURI: Sendable, Hashable {
    public var dataset: String
    public var entity: String
    /// The UUID in lowercase.
    public var id: String

    /// The canonical form: the UUID in lowercase.
    public var text: String { "tandem://\(dataset)/\(entity)/\(id)" }

    /// `nil` when `text` is not a record URI.
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        let prefix: [UInt8] = Array("tandem://".utf8)
        guard bytes.count > prefix.count, bytes.starts(with: prefix) else { return nil }
        var slashes: [Int] = []
        for index in prefix.count..<bytes.count where bytes[index] == UInt8(ascii: "/") {
            slashes.append(index)
            if slashes.count > 2 { return nil }
        }
        guard slashes.count == 2, slashes[0] > prefix.count, slashes[1] > slashes[0] + 1 else { return nil }
        var id = Array(bytes[(slashes[1] + 1)...])
        guard id.count == 36 else { return nil }
        for (offset, byte) in id.enumerated() {
            switch offset {
            case 8, 13, 18, 23:
                guard byte == UInt8(ascii: "-") else { return nil }
            default:
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"): break
                case UInt8(ascii: "A")...UInt8(ascii: "F"): id[offset] = byte + 32
                default: return nil
                }
            }
        }
        dataset = String(decoding: bytes[prefix.count..<slashes[0]], as: UTF8.self)
        entity = String(decoding: bytes[(slashes[0] + 1)..<slashes[1]], as: UTF8.self)
        self.id = String(decoding: id, as: UTF8.self)
    }
}

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
        // Read in place (a native string is contiguous): this runs for every change.
        guard let parsed = text.utf8.withContiguousStorageIfAvailable(Self.parse) ?? Array(text.utf8).withUnsafeBufferPointer(Self.parse) else {
            return nil
        }
        self = parsed
    }

    /// Whether the text read was already canonical (its id in lowercase), so ``text`` equals
    /// it and need not be written again. Not part of the URI's identity.
    public private(set) var wasCanonical = true

    public static func == (lhs: RecordURI, rhs: RecordURI) -> Bool {
        lhs.dataset == rhs.dataset && lhs.entity == rhs.entity && lhs.id == rhs.id
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(dataset)
        hasher.combine(entity)
        hasher.combine(id)
    }

    private init(dataset: String, entity: String, id: String, wasCanonical: Bool) {
        self.dataset = dataset
        self.entity = entity
        self.id = id
        self.wasCanonical = wasCanonical
    }

    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> RecordURI? {
        let prefix: StaticString = "tandem://"
        let start = prefix.utf8CodeUnitCount
        guard bytes.count > start, (0..<start).allSatisfy({ bytes[$0] == prefix.utf8Start[$0] }) else { return nil }
        var first = -1, second = -1
        for index in start..<bytes.count where bytes[index] == UInt8(ascii: "/") {
            if first < 0 { first = index } else if second < 0 { second = index } else { return nil }
        }
        guard first > start, second > first + 1, bytes.count - (second + 1) == 36 else { return nil }
        var lowercase = true
        for offset in 0..<36 {
            let byte = bytes[second + 1 + offset]
            switch offset {
            case 8, 13, 18, 23:
                guard byte == UInt8(ascii: "-") else { return nil }
            default:
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"): break
                case UInt8(ascii: "A")...UInt8(ascii: "F"): lowercase = false
                default: return nil
                }
            }
        }
        let idBytes = UnsafeBufferPointer(rebasing: bytes[(second + 1)...])
        let id =
            lowercase
            ? String(decoding: idBytes, as: UTF8.self)
            : String(decoding: idBytes.map { (UInt8(ascii: "A")...UInt8(ascii: "F")).contains($0) ? $0 + 32 : $0 }, as: UTF8.self)
        return RecordURI(
            dataset: String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<first]), as: UTF8.self),
            entity: String(decoding: UnsafeBufferPointer(rebasing: bytes[(first + 1)..<second]), as: UTF8.self),
            id: id, wasCanonical: lowercase)
    }
}

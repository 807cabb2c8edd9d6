/// JSON coders reused across the rows of one fetch or save (creating them per row is slow).
///
/// JSON output uses sorted keys so the same value always produces the same text.
final class CoderCache {
    lazy var encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
    lazy var decoder = JSONDecoder()

    func jsonText<T: Encodable>(_ value: T) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}

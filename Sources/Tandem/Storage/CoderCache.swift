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

    /// One composite decoder per attribute, reused for every row of a fetch (same statement,
    /// same columns).
    private var compositeDecoders: [Int: CompositeDecoder] = [:]

    func compositeDecoder(attribute: Int, mapping: EntityMapping, statement: OpaquePointer, base: Int32) -> CompositeDecoder {
        if let decoder = compositeDecoders[attribute], decoder.statement == statement { return decoder }
        let decoder = CompositeDecoder(layout: mapping.composites[attribute]!, statement: statement, base: base, coders: self)
        compositeDecoders[attribute] = decoder
        return decoder
    }

    func jsonText<T: Encodable>(_ value: T) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}

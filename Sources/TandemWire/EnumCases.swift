public import TandemSchema

/// The raw values of an enum's cases as they travel (an `Int` enum's as integers, a `String`
/// enum's as text), to tell whether a value is one of them: the server refuses a pushed value
/// that is none (when its schema version lists the cases), and a replica keeps such a value
/// aside instead of showing it to an app that cannot decode it.
///
/// ```swift
/// let cases = EnumCases(Schema.Enumeration(typeName: "MyType", rawType: .int, cases: [.init(name: "one", rawValue: "0")]))
/// cases?.contains(.integer(0))    // true
/// cases?.contains(.integer(99))   // false
/// ```
public struct EnumCases: Sendable, Hashable {
    public let enumeration: Schema.Enumeration
    private let integers: Set<Int64>
    private let reals: Set<Double>
    private let texts: Set<String>

    /// `nil` when the enumeration does not list its cases (an enum that is not CaseIterable,
    /// in a schema a running app recorded).
    public init?(_ enumeration: Schema.Enumeration) {
        guard let cases = enumeration.cases else { return nil }
        self.enumeration = enumeration
        integers = Set(cases.compactMap { Int64($0.rawValue) })
        reals = Set(cases.compactMap { Double($0.rawValue) })
        texts = Set(cases.map(\.rawValue))
    }

    /// Whether `value` is the raw value of a case (null is: whether a column may hold null is
    /// the column's business).
    public func contains(_ value: WireValue) -> Bool {
        switch (value, enumeration.rawType.sqlType) {
        case (.null, _): true
        case (.integer(let integer), .real): reals.contains(Double(integer))
        case (.integer(let integer), _): integers.contains(integer)
        case (.bool(let flag), _): integers.contains(flag ? 1 : 0)
        case (.real(let real), _): reals.contains(real)
        case (.text(let text), _): texts.contains(text)
        case (.bytes, _): false
        }
    }

    /// The first case's raw value as it travels: what a replica shows in a new record whose
    /// value it keeps aside (a case it does not know), until it can show that value.
    public var firstCase: WireValue? {
        enumeration.cases?.first.flatMap { Self.wireValue($0.rawValue, of: enumeration) }
    }

    /// The raw value of the case a default value names (`.normal`, as the schema records a
    /// property's default), as it travels; `nil` when it names none of the cases.
    ///
    /// ```swift
    /// EnumCases.defaultValue(".two", of: enumeration)   // .integer(1)
    /// ```
    public static func defaultValue(_ text: String, of enumeration: Schema.Enumeration) -> WireValue? {
        guard text.hasPrefix("."), let raw = enumeration.cases?.first(where: { $0.name == String(text.dropFirst()) })?.rawValue else { return nil }
        return wireValue(raw, of: enumeration)
    }

    private static func wireValue(_ raw: String, of enumeration: Schema.Enumeration) -> WireValue? {
        switch enumeration.rawType.sqlType {
        case .integer: return Int64(raw).map(WireValue.integer)
        case .real: return Double(raw).map(WireValue.real)
        case .text: return .text(raw)
        case .blob: return nil
        }
    }

    /// The cases for a message: `0 (one), 1 (two), 7 (three)`.
    public var listed: String {
        (enumeration.cases ?? []).map { "\($0.rawValue) (\($0.name))" }.joined(separator: ", ")
    }

    /// The enum columns of `entity` whose cases are listed, by column name (a composite's
    /// leaf by its path, `people.kind`).
    public static func columns(of entity: Schema.Entity) -> [String: EnumCases] {
        var result: [String: EnumCases] = [:]
        func visit(_ type: Schema.AttributeType, _ path: String) {
            switch type {
            case .enumeration(let enumeration): if let cases = EnumCases(enumeration) { result[path] = cases }
            case .composite(let composite): for field in composite.fields { visit(field.type, path + "." + field.name) }
            default: break
            }
        }
        for attribute in entity.attributes { visit(attribute.type, attribute.name) }
        return result
    }
}

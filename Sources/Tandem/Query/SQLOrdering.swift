/// Orders objects in memory the way the SQL `ORDER BY` Tandem compiles orders rows, so a fetch
/// that merges unsaved objects sorts them like stored ones: NULL (nil) first, text by bytes
/// (SQLite's BINARY collation), numbers and dates numerically, enums by raw value, UUIDs by
/// their lowercase text. Foundation's `SortDescriptor` would sort strings
/// `.localizedStandard` instead.
enum SQLOrdering {
    static func areInIncreasingOrder<T>(_ lhs: T, _ rhs: T, by descriptors: [SortDescriptor<T>]) -> Bool {
        for descriptor in descriptors {
            guard let keyPath = descriptor.keyPath else { continue }
            let order = compare(lhs[keyPath: keyPath], rhs[keyPath: keyPath])
            if order == .orderedSame { continue }
            return (order == .orderedAscending) == (descriptor.order == .forward)
        }
        return false
    }

    static func compare(_ a: Any, _ b: Any) -> ComparisonResult {
        let a = unwrap(a), b = unwrap(b)
        switch (a, b) {
        case (nil, nil): return .orderedSame
        case (nil, _): return .orderedAscending
        case (_, nil): return .orderedDescending
        case let (x as String, y as String):
            return x.utf8.lexicographicallyPrecedes(y.utf8) ? .orderedAscending : (x == y ? .orderedSame : .orderedDescending)
        case let (x as Date, y as Date): return order(x.timeIntervalSince1970, y.timeIntervalSince1970)
        case let (x as UUID, y as UUID): return compare(UUIDText.string(x), UUIDText.string(y))
        case let (x as Bool, y as Bool): return order(x ? 1 : 0, y ? 1 : 0)
        default:
            if let x = number(a!), let y = number(b!) { return order(x, y) }
            if let x = (a as? any RawRepresentable)?.rawValue, let y = (b as? any RawRepresentable)?.rawValue { return compare(x, y) }
            if let x = a as? any PersistentModel, let y = b as? any PersistentModel {
                return compare(UUIDText.string(x.uuidAssigningIfNeeded), UUIDText.string(y.uuidAssigningIfNeeded))
            }
            return .orderedSame
        }
    }

    private static func unwrap(_ value: Any) -> Any? {
        if let optional = value as? any OptionalValue { return optional.wrappedValue.flatMap(unwrap) }
        return value
    }

    private static func number(_ value: Any) -> Double? {
        switch value {
        case let x as Int: Double(x)
        case let x as Int64: Double(x)
        case let x as Int32: Double(x)
        case let x as Int16: Double(x)
        case let x as Int8: Double(x)
        case let x as UInt: Double(x)
        case let x as UInt64: Double(x)
        case let x as UInt32: Double(x)
        case let x as UInt16: Double(x)
        case let x as UInt8: Double(x)
        case let x as Double: x
        case let x as Float: Double(x)
        default: nil
        }
    }

    private static func order(_ x: Double, _ y: Double) -> ComparisonResult {
        x < y ? .orderedAscending : (x > y ? .orderedDescending : .orderedSame)
    }
}

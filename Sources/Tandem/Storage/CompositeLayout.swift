/// Where each field of a composite lives, relative to the attribute's first column.
///
/// Mirrors ``Schema/Composite``'s column order: an optional composite starts with its
/// presence column, then one column per leaf, depth first.
final class CompositeLayout: Sendable {
    enum Field: Sendable {
        case leaf(offset: Int32, type: Schema.AttributeType)
        case composite(CompositeLayout)
    }

    /// The presence column (`1` / `NULL`) of an optional composite.
    let presenceOffset: Int32?
    let fields: [String: Field]
    let fieldOrder: [String]
    /// Fields in coding order: decoders read them in this order, so a cursor finds each one
    /// without hashing its name.
    let orderedFields: [(name: String, field: Field)]

    /// Builds the layout of `composite`, consuming column offsets from `next`.
    init(_ composite: Schema.Composite, optional: Bool, next: inout Int32) {
        if optional {
            presenceOffset = next
            next += 1
        } else {
            presenceOffset = nil
        }
        var fields: [String: Field] = [:]
        for field in composite.fields {
            if case .composite(let nested) = field.type {
                fields[field.name] = .composite(CompositeLayout(nested, optional: field.isOptional, next: &next))
            } else {
                fields[field.name] = .leaf(offset: next, type: field.type)
                next += 1
            }
        }
        self.fields = fields
        self.fieldOrder = composite.fields.map(\.name)
        self.orderedFields = composite.fields.map { ($0.name, fields[$0.name]!) }
    }
}

public import SwiftDiagnostics

/// Every error the Tandem macros report, with the text the user sees.
///
/// Property diagnostics name the offending property so that a class with several problems
/// reads clearly in the compiler output. A property that gets a diagnostic is left out of
/// the generated code, so one mistake produces one error rather than a cascade.
public enum TandemDiagnostic: DiagnosticMessage, Equatable, Sendable {
    /// `@Model` was attached to a struct, enum, actor, protocol or extension.
    case modelRequiresClass
    /// `@Model` was attached to a class that is not `final`.
    case modelRequiresFinalClass
    /// `@ModelActor` was attached to something other than an actor.
    case modelActorRequiresActor
    /// A persisted property was declared with `let`.
    case letProperty(name: String)
    /// A `@Transient` property has no initial value, so a fetched object could not be built.
    case transientWithoutDefault(name: String)
    /// A persisted property declares `willSet` or `didSet`.
    case propertyObservers(name: String)
    /// Several properties declared by one `var`, or a tuple pattern.
    case multipleBindings(name: String)
    /// A persisted property is `lazy`.
    case lazyProperty(name: String)
    /// A persisted property is `weak` or `unowned`.
    case referenceOwnership(name: String, keyword: String)
    /// A persisted property's declared type can never be stored.
    case unstorableType(name: String, type: String, kind: UnstorableTypeKind)
    /// A property uses a name that the generated code needs for itself.
    case reservedName(name: String)
    /// `@Model(originalName:)` was given something other than a non-empty string literal.
    case originalNameNotLiteral

    public var message: String {
        switch self {
        case .modelRequiresClass:
            return "@Model can only be applied to a class"
        case .modelRequiresFinalClass:
            return "@Model classes must be 'final'"
        case .modelActorRequiresActor:
            return "@ModelActor can only be applied to an actor"
        case .letProperty(let name):
            return "'let' property '\(name)' cannot be persisted: declare it 'var', or mark it @Transient"
        case .transientWithoutDefault(let name):
            return "@Transient property '\(name)' needs a default value"
        case .propertyObservers(let name):
            return "property '\(name)' has observers; persisted properties cannot have willSet/didSet"
        case .multipleBindings(let name):
            return "declare persisted property '\(name)' on its own line"
        case .lazyProperty(let name):
            return "'lazy' property '\(name)' cannot be persisted; mark it @Transient"
        case .referenceOwnership(let name, let keyword):
            return "'\(keyword)' property '\(name)' cannot be persisted; mark it @Transient"
        case .unstorableType(let name, let type, let kind):
            return "property '\(name)' has type '\(type)', which cannot be stored; \(kind.hint)"
        case .reservedName(let name):
            return "property name '\(name)' is reserved by @Model; rename the property"
        case .originalNameNotLiteral:
            return "@Model(originalName:) takes the model's first name as a non-empty string literal, e.g. @Model(originalName: \"Task\")"
        }
    }

    public var severity: DiagnosticSeverity { .error }

    public var diagnosticID: MessageID {
        MessageID(domain: "Tandem", id: identifier)
    }

    private var identifier: String {
        switch self {
        case .modelRequiresClass: return "modelRequiresClass"
        case .modelRequiresFinalClass: return "modelRequiresFinalClass"
        case .modelActorRequiresActor: return "modelActorRequiresActor"
        case .letProperty: return "letProperty"
        case .transientWithoutDefault: return "transientWithoutDefault"
        case .propertyObservers: return "propertyObservers"
        case .multipleBindings: return "multipleBindings"
        case .lazyProperty: return "lazyProperty"
        case .referenceOwnership: return "referenceOwnership"
        case .unstorableType: return "unstorableType"
        case .reservedName: return "reservedName"
        case .originalNameNotLiteral: return "originalNameNotLiteral"
        }
    }
}

/// The Fix-Its offered next to a ``TandemDiagnostic``.
public enum TandemFixIt: FixItMessage, Sendable {
    /// Inserts `final` before `class`.
    case insertFinal

    public var message: String {
        switch self {
        case .insertFinal: return "insert 'final'"
        }
    }

    public var fixItID: MessageID {
        switch self {
        case .insertFinal: return MessageID(domain: "Tandem", id: "insertFinal")
        }
    }
}

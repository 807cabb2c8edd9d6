public import SwiftDiagnostics
public import SwiftSyntax

/// What `@Model` makes of one member of the class.
public enum PropertyClassification {
    /// Nothing to store: a computed, `static`/`class` or `@Transient` property, or not a
    /// property at all.
    case notPersisted
    /// A stored property that `@Model` persists.
    case persisted(PersistedProperty)
    /// A property that cannot be persisted as written; the diagnostic says why. It is left
    /// out of the generated code.
    case rejected(Diagnostic)
}

/// The syntactic analysis of a `var`/`let` member of a `@Model` class.
///
/// Every stored instance property is persisted unless it is marked `@Transient`. The rules
/// that make a property unusable (``TandemDiagnostic``) are checked here, from the syntax
/// alone; each rejected property yields exactly one diagnostic.
public struct PropertyDeclaration {
    /// The declaration being analysed.
    public let declaration: VariableDeclSyntax

    public init(_ declaration: VariableDeclSyntax) {
        self.declaration = declaration
    }

    /// Names the generated members use for themselves.
    static func isReserved(_ name: String) -> Bool {
        name == "persistentState" || name.hasPrefix("_$")
    }

    /// `static var` or `class var`.
    public var isStatic: Bool {
        declaration.modifiers.modifier(.static) != nil || declaration.modifiers.modifier(.class) != nil
    }

    /// Marked `@Transient`.
    public var isTransient: Bool {
        declaration.attributes.attribute(named: "Transient") != nil
    }

    /// Already carries `@_PersistedProperty`, so `@Model` must not add it again.
    public var hasPersistedPropertyAttribute: Bool {
        declaration.attributes.attribute(named: "_PersistedProperty") != nil
    }

    /// A computed property: a bare getter body, or an accessor block with anything other
    /// than `willSet`/`didSet`.
    public var isComputed: Bool {
        guard declaration.bindings.count == 1, let accessors = declaration.bindings.first?.accessorBlock else {
            return false
        }
        switch accessors.accessors {
        case .getter:
            return true
        case .accessors(let list):
            return list.contains { !Self.isObserver($0) }
        }
    }

    /// Decides whether the property is persisted, ignored, or rejected with a diagnostic.
    public func classify() -> PropertyClassification {
        if isStatic {
            return .notPersisted
        }
        for binding in declaration.bindings {
            if let identifier = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier,
                Self.isReserved(identifier.unescapedText)
            {
                return reject(binding.pattern, .reservedName(name: identifier.unescapedText))
            }
        }
        if isComputed {
            return .notPersisted
        }
        if isTransient {
            return classifyTransient()
        }
        return classifyPersisted()
    }

    /// A `@Transient` stored property must have a value of its own when a fetched object is
    /// built: an initializer, or the implicit `nil` of a `var` declared `T?` or `T!`.
    private func classifyTransient() -> PropertyClassification {
        let isVar = declaration.bindingSpecifier.tokenKind == .keyword(.var)
        let bindings = Array(declaration.bindings)
        for (position, binding) in bindings.enumerated() where binding.initializer == nil {
            // In `var a, b: Int?` the annotation of `b` also types `a`.
            let type = bindings[position...].lazy.compactMap(\.typeAnnotation).first?.type
            let isImplicitlyNil =
                isVar
                && (type?.is(OptionalTypeSyntax.self) == true
                    || type?.is(ImplicitlyUnwrappedOptionalTypeSyntax.self) == true)
            if !isImplicitlyNil {
                return reject(binding.pattern, .transientWithoutDefault(name: binding.pattern.trimmedDescription))
            }
        }
        return .notPersisted
    }

    /// The rules for a stored property that is not `@Transient`.
    private func classifyPersisted() -> PropertyClassification {
        guard let binding = declaration.bindings.first else {
            return .notPersisted
        }
        guard declaration.bindings.count == 1,
            let identifier = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier
        else {
            return reject(binding.pattern, .multipleBindings(name: binding.pattern.trimmedDescription))
        }
        let name = identifier.unescapedText
        if declaration.bindingSpecifier.tokenKind == .keyword(.let) {
            return reject(declaration.bindingSpecifier, .letProperty(name: name))
        }
        if let lazy = declaration.modifiers.modifier(.lazy) {
            return reject(lazy, .lazyProperty(name: name))
        }
        for keyword in [Keyword.weak, .unowned] {
            if let modifier = declaration.modifiers.modifier(keyword) {
                return reject(modifier, .referenceOwnership(name: name, keyword: modifier.name.text))
            }
        }
        if case .accessors(let list) = binding.accessorBlock?.accessors,
            let observer = list.first(where: Self.isObserver)
        {
            return reject(observer.accessorSpecifier, .propertyObservers(name: name))
        }
        if let type = binding.typeAnnotation?.type, let kind = UnstorableTypeKind.of(type) {
            return reject(type, .unstorableType(name: name, type: type.trimmedDescription, kind: kind))
        }
        let attribute = declaration.attributes.attribute(named: "Attribute") ?? declaration.attributes.attribute(named: "Relationship")
        let arguments = attribute?.arguments?.as(LabeledExprListSyntax.self).map(Array.init) ?? []
        var property = PersistedProperty(
            identifier: identifier.trimmed,
            type: binding.typeAnnotation?.type.trimmed,
            initializer: binding.initializer?.value.trimmed,
            options: arguments.filter { $0.label == nil }.map(\.expression.trimmed),
            originalName: arguments.first { $0.label?.text == "originalName" }?.expression.trimmed)
        property.deleteRule = arguments.first { $0.label?.text == "deleteRule" }?.expression.trimmed
        property.inverse = arguments.first { $0.label?.text == "inverse" }?.expression.trimmed
        return .persisted(property)
    }

    private func reject(_ node: some SyntaxProtocol, _ message: TandemDiagnostic) -> PropertyClassification {
        .rejected(Diagnostic(node: node, message: message))
    }

    private static func isObserver(_ accessor: AccessorDeclSyntax) -> Bool {
        switch accessor.accessorSpecifier.tokenKind {
        case .keyword(.willSet), .keyword(.didSet): return true
        default: return false
        }
    }
}

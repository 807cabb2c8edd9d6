public import SwiftDiagnostics
public import SwiftSyntax

/// The analysis of a whole `@Model` class: its persisted properties in declaration order
/// (a property's position is its index in every generated row) and the diagnostics for the
/// properties that were rejected.
///
/// Only the class's direct members are considered; properties inside `#if` blocks are not
/// persisted.
public struct ModelDeclaration {
    /// The class name as written, used as the root of key paths (`\Todo.title`).
    public let typeName: String
    /// The persisted properties; the array index is the property's row index.
    public let persisted: [PersistedProperty]
    /// One error per rejected property, in declaration order.
    public let diagnostics: [Diagnostic]

    public init(_ classDeclaration: ClassDeclSyntax) {
        var persisted: [PersistedProperty] = []
        var diagnostics: [Diagnostic] = []
        for member in classDeclaration.memberBlock.members {
            guard let variable = member.decl.as(VariableDeclSyntax.self) else {
                continue
            }
            switch PropertyDeclaration(variable).classify() {
            case .notPersisted:
                break
            case .persisted(let property):
                persisted.append(property)
            case .rejected(let diagnostic):
                diagnostics.append(diagnostic)
            }
        }
        self.typeName = classDeclaration.name.text
        self.persisted = persisted
        self.diagnostics = diagnostics
    }

    /// The row index of the persisted property called `name`.
    public func index(of name: String) -> Int? {
        persisted.firstIndex { $0.name == name }
    }
}

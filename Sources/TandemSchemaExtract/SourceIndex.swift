import SwiftSyntax
import TandemSchema

/// Every declaration of the given sources that extraction may need: `@Model` classes,
/// structs, enums, and the conformances extensions add, by type name.
///
/// Types are indexed by their simple name (`Inner` for `Outer.Inner`), which is also how a
/// running app names them in a schema (`String(describing:)`).
struct SourceIndex {
    /// A parsed file.
    struct File {
        let path: String
        let tree: SourceFileSyntax
        let converter: SourceLocationConverter

        func location(of node: some SyntaxProtocol) -> TandemSchema.SourceLocation {
            let position = node.positionAfterSkippingLeadingTrivia
            return TandemSchema.SourceLocation(file: path, line: converter.location(for: position).line)
        }
    }

    /// A declaration and the file it is in.
    struct Declared<Declaration: SyntaxProtocol> {
        let declaration: Declaration
        let file: File
        var location: TandemSchema.SourceLocation { file.location(of: declaration) }
    }

    private(set) var models: [Declared<ClassDeclSyntax>] = []
    private(set) var structs: [String: Declared<StructDeclSyntax>] = [:]
    private(set) var enums: [String: Declared<EnumDeclSyntax>] = [:]
    /// Conformances declared in extensions, by extended type (simple name).
    private(set) var extensionConformances: [String: Set<String>] = [:]

    init(files: [File]) {
        for file in files {
            let collector = Collector(viewMode: .sourceAccurate)
            collector.walk(file.tree)
            for model in collector.models { models.append(Declared(declaration: model, file: file)) }
            for item in collector.structs where structs[item.name.text] == nil {
                structs[item.name.text] = Declared(declaration: item, file: file)
            }
            for item in collector.enums where enums[item.name.text] == nil {
                enums[item.name.text] = Declared(declaration: item, file: file)
            }
            for (name, conformances) in collector.extensions {
                extensionConformances[name, default: []].formUnion(conformances)
            }
        }
    }

    /// The conformances of a type: its inheritance clause plus its extensions'.
    func conformances(of name: String, inheritance: InheritanceClauseSyntax?) -> Set<String> {
        var names = Set(inheritance?.inheritedTypes.flatMap { Self.names(in: $0.type) } ?? [])
        names.formUnion(extensionConformances[name] ?? [])
        return names
    }

    /// `Codable`, `Swift.Codable`, `Decodable & Encodable` → their simple names.
    static func names(in type: TypeSyntax) -> [String] {
        if let composition = type.as(CompositionTypeSyntax.self) {
            return composition.elements.flatMap { names(in: $0.type) }
        }
        return [simpleName(of: type)]
    }

    /// The last component of a type name: `Foundation.Date` → `Date`.
    static func simpleName(of type: TypeSyntax) -> String {
        if let member = type.as(MemberTypeSyntax.self) { return member.name.text }
        if let identifier = type.as(IdentifierTypeSyntax.self) { return identifier.name.text }
        return type.trimmedDescription
    }
}

/// Collects declarations at any depth (nested types included), skipping function bodies.
private final class Collector: SyntaxVisitor {
    var models: [ClassDeclSyntax] = []
    var structs: [StructDeclSyntax] = []
    var enums: [EnumDeclSyntax] = []
    var extensions: [(String, Set<String>)] = []

    override func visit(_ node: ClassDeclSyntax) -> SyntaxVisitorContinueKind {
        if node.attributes.contains(where: { $0.as(AttributeSyntax.self).map { SourceIndex.simpleName(of: $0.attributeName) == "Model" } ?? false }) {
            models.append(node)
        }
        return .visitChildren
    }

    override func visit(_ node: StructDeclSyntax) -> SyntaxVisitorContinueKind {
        structs.append(node)
        return .visitChildren
    }

    override func visit(_ node: EnumDeclSyntax) -> SyntaxVisitorContinueKind {
        enums.append(node)
        return .visitChildren
    }

    override func visit(_ node: ExtensionDeclSyntax) -> SyntaxVisitorContinueKind {
        let conformances = node.inheritanceClause?.inheritedTypes.flatMap { SourceIndex.names(in: $0.type) } ?? []
        extensions.append((SourceIndex.simpleName(of: node.extendedType), Set(conformances)))
        return .visitChildren
    }

    override func visit(_ node: FunctionDeclSyntax) -> SyntaxVisitorContinueKind { .skipChildren }
    override func visit(_ node: InitializerDeclSyntax) -> SyntaxVisitorContinueKind { .skipChildren }
    override func visit(_ node: AccessorBlockSyntax) -> SyntaxVisitorContinueKind { .skipChildren }
    override func visit(_ node: ClosureExprSyntax) -> SyntaxVisitorContinueKind { .skipChildren }
}

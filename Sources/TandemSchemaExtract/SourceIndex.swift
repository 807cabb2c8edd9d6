import SwiftSyntax
import TandemSchema

/// Every declaration of the given sources that extraction may need: `@Model` classes,
/// structs, enums, type aliases and the conformances extensions add.
///
/// Types are found the way Swift finds them: a name used inside `Outer` means `Outer.Name`
/// if there is one, else the next enclosing type's, else a top-level `Name`; a name declared
/// only once anywhere is found from anywhere. A running app names types by their simple name
/// (`String(describing:)` prints `Inner` for `Outer.Inner`), and so does the schema.
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

    /// A declaration, the types it is nested in, and the file it is in.
    struct Declared<Declaration: SyntaxProtocol> {
        let declaration: Declaration
        /// Enclosing type names, outermost first (`["V2"]` for `V2.Note`).
        let scope: [String]
        let file: File
        var location: TandemSchema.SourceLocation { file.location(of: declaration) }
    }

    /// A type declaration of any kind.
    enum TypeDeclaration {
        case structure(Declared<StructDeclSyntax>)
        case enumeration(Declared<EnumDeclSyntax>)
        case alias(Declared<TypeAliasDeclSyntax>)
        case model(Declared<ClassDeclSyntax>)
        case other(scope: [String], name: String)

        var scope: [String] {
            switch self {
            case .structure(let d): d.scope
            case .enumeration(let d): d.scope
            case .alias(let d): d.scope
            case .model(let d): d.scope
            case .other(let scope, _): scope
            }
        }

        var location: TandemSchema.SourceLocation? {
            switch self {
            case .structure(let d): d.location
            case .enumeration(let d): d.location
            case .alias(let d): d.location
            case .model(let d): d.location
            case .other: nil
            }
        }
    }

    private(set) var models: [Declared<ClassDeclSyntax>] = []
    /// Every type declaration by qualified name (`Outer.Inner`).
    private(set) var types: [String: TypeDeclaration] = [:]
    /// Qualified names by simple name.
    private(set) var qualifiedNames: [String: [String]] = [:]
    /// Conformances declared in extensions, by extended type (as written, e.g. `Outer.Inner`).
    private(set) var extensionConformances: [String: Set<String>] = [:]

    init(files: [File]) {
        for file in files {
            let collector = Collector(viewMode: .sourceAccurate)
            collector.walk(file.tree)
            for (scope, model) in collector.models { models.append(Declared(declaration: model, scope: scope, file: file)) }
            for (scope, name, kind) in collector.types {
                let qualified = (scope + [name]).joined(separator: ".")
                guard types[qualified] == nil else { continue }
                let declaration: TypeDeclaration =
                    switch kind {
                    case .structure(let node): .structure(Declared(declaration: node, scope: scope, file: file))
                    case .enumeration(let node): .enumeration(Declared(declaration: node, scope: scope, file: file))
                    case .alias(let node): .alias(Declared(declaration: node, scope: scope, file: file))
                    case .model(let node): .model(Declared(declaration: node, scope: scope, file: file))
                    case .other: .other(scope: scope, name: name)
                    }
                types[qualified] = declaration
                qualifiedNames[name, default: []].append(qualified)
            }
            for (name, conformances) in collector.extensions {
                extensionConformances[name, default: []].formUnion(conformances)
            }
        }
    }

    /// The result of looking a type name up.
    enum Lookup {
        case found(qualifiedName: String, TypeDeclaration)
        case notFound
        /// Several declarations could be meant; their qualified names.
        case ambiguous([String])
    }

    /// Finds the type `name` (possibly dotted, `Outer.Inner`) as used inside `scope`.
    func lookup(_ name: String, from scope: [String]) -> Lookup {
        var prefix = scope
        while true {
            let qualified = (prefix + [name]).joined(separator: ".")
            if let declaration = types[qualified] { return .found(qualifiedName: qualified, declaration) }
            if prefix.isEmpty { break }
            prefix.removeLast()
        }
        let simple = name.split(separator: ".").last.map(String.init) ?? name
        let candidates = (qualifiedNames[simple] ?? []).filter { $0 == name || $0.hasSuffix("." + name) }
        switch candidates.count {
        case 0: return .notFound
        case 1: return .found(qualifiedName: candidates[0], types[candidates[0]]!)
        default: return .ambiguous(candidates.sorted())
        }
    }

    /// The conformances of a type: its inheritance clause plus its extensions'.
    func conformances(of qualifiedName: String, inheritance: InheritanceClauseSyntax?) -> Set<String> {
        var names = Set(inheritance?.inheritedTypes.flatMap { Self.names(in: $0.type) } ?? [])
        names.formUnion(extensionConformances[qualifiedName] ?? [])
        let simple = qualifiedName.split(separator: ".").last.map(String.init) ?? qualifiedName
        if simple != qualifiedName, (qualifiedNames[simple] ?? []).count == 1 {
            names.formUnion(extensionConformances[simple] ?? [])
        }
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
        if let member = type.as(MemberTypeSyntax.self) { return member.name.unescapedText }
        if let identifier = type.as(IdentifierTypeSyntax.self) { return identifier.name.unescapedText }
        return type.trimmedDescription
    }
}

extension TokenSyntax {
    /// The identifier without backticks: `` `default` `` → `default`.
    var unescapedText: String {
        let text = self.text
        return text.hasPrefix("`") && text.hasSuffix("`") && text.count >= 2 ? String(text.dropFirst().dropLast()) : text
    }
}

/// Collects declarations at any depth with the types enclosing them, skipping function bodies.
private final class Collector: SyntaxVisitor {
    enum Kind {
        case structure(StructDeclSyntax)
        case enumeration(EnumDeclSyntax)
        case alias(TypeAliasDeclSyntax)
        case model(ClassDeclSyntax)
        case other
    }

    var models: [([String], ClassDeclSyntax)] = []
    var types: [([String], String, Kind)] = []
    var extensions: [(String, Set<String>)] = []
    private var scope: [String] = []

    private func enter(_ name: String) { scope.append(name) }

    override func visit(_ node: ClassDeclSyntax) -> SyntaxVisitorContinueKind {
        let isModel = node.attributes.contains { $0.as(AttributeSyntax.self).map { SourceIndex.simpleName(of: $0.attributeName) == "Model" } ?? false }
        if isModel { models.append((scope, node)) }
        types.append((scope, node.name.unescapedText, isModel ? .model(node) : .other))
        enter(node.name.unescapedText)
        return .visitChildren
    }

    override func visitPost(_ node: ClassDeclSyntax) { scope.removeLast() }

    override func visit(_ node: StructDeclSyntax) -> SyntaxVisitorContinueKind {
        types.append((scope, node.name.unescapedText, .structure(node)))
        enter(node.name.unescapedText)
        return .visitChildren
    }

    override func visitPost(_ node: StructDeclSyntax) { scope.removeLast() }

    override func visit(_ node: EnumDeclSyntax) -> SyntaxVisitorContinueKind {
        types.append((scope, node.name.unescapedText, .enumeration(node)))
        enter(node.name.unescapedText)
        return .visitChildren
    }

    override func visitPost(_ node: EnumDeclSyntax) { scope.removeLast() }

    override func visit(_ node: ActorDeclSyntax) -> SyntaxVisitorContinueKind {
        types.append((scope, node.name.unescapedText, .other))
        enter(node.name.unescapedText)
        return .visitChildren
    }

    override func visitPost(_ node: ActorDeclSyntax) { scope.removeLast() }

    override func visit(_ node: TypeAliasDeclSyntax) -> SyntaxVisitorContinueKind {
        types.append((scope, node.name.unescapedText, .alias(node)))
        return .skipChildren
    }

    override func visit(_ node: ExtensionDeclSyntax) -> SyntaxVisitorContinueKind {
        let conformances = node.inheritanceClause?.inheritedTypes.flatMap { SourceIndex.names(in: $0.type) } ?? []
        let extended = node.extendedType.trimmedDescription.replacingOccurrences(of: " ", with: "")
        extensions.append((extended, Set(conformances)))
        // Members of an extension are nested in the extended type.
        scope.append(contentsOf: extended.split(separator: ".").map(String.init))
        return .visitChildren
    }

    override func visitPost(_ node: ExtensionDeclSyntax) {
        let extended = node.extendedType.trimmedDescription.replacingOccurrences(of: " ", with: "")
        scope.removeLast(extended.split(separator: ".").count)
    }

    override func visit(_ node: FunctionDeclSyntax) -> SyntaxVisitorContinueKind { .skipChildren }
    override func visit(_ node: InitializerDeclSyntax) -> SyntaxVisitorContinueKind { .skipChildren }
    override func visit(_ node: AccessorBlockSyntax) -> SyntaxVisitorContinueKind { .skipChildren }
    override func visit(_ node: ClosureExprSyntax) -> SyntaxVisitorContinueKind { .skipChildren }
}

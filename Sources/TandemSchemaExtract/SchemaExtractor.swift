import Foundation
import SwiftParser
import SwiftParserDiagnostics
import SwiftSyntax
import TandemMacrosSupport
public import TandemSchema

/// The schema of `@Model` classes read from Swift sources, without building the app.
///
/// `tandem schema extract` and `tandem schema check --candidate <dir>` use it. The result is
/// the schema `Schema([Model.self, …])` produces at runtime for the same models, entities in
/// file-path order then declaration order; it also knows where each declaration is and the
/// `// tandem:allow RULE_ID reason` comments written on them.
///
/// ```swift
/// let extracted = try SchemaExtractor().extract([SourceText(path: "Todo.swift", text: source)])
/// let json = try extracted.schema.canonicalJSON()
/// ```
public struct SchemaExtractor: Sendable {
    /// Storage shapes of types the sources do not define (`--types`), by simple type name.
    public var typeHints: [String: Schema.AttributeType]
    /// Only models nested in a type of this name, plus top-level ones (`V2` for a versioned
    /// schema's `enum V2 { @Model final class Note … }`); `nil` for every model.
    public var scope: String?

    public init(typeHints: [String: Schema.AttributeType] = [:], scope: String? = nil) {
        self.typeHints = typeHints
        self.scope = scope
    }

    /// Extracts the schema of every `@Model` class in `sources`.
    ///
    /// - Throws: ``SchemaError`` with ``SchemaError/Code/invalidSource`` and a location: a file
    ///   that does not parse, a type used by a model that the sources do not define (and no
    ///   hint describes), a property `@Model` would reject; ``SchemaError/Code/invalidConfiguration``
    ///   for a malformed `// tandem:allow` comment.
    public func extract(_ sources: [SourceText]) throws -> ExtractedSchema {
        var files: [SourceIndex.File] = []
        for source in sources.sorted(by: { $0.path < $1.path }) {
            let tree = Parser.parse(source: source.text)
            let converter = SourceLocationConverter(fileName: source.path, tree: tree)
            let file = SourceIndex.File(path: source.path, tree: tree, converter: converter)
            if let error = ParseDiagnosticsGenerator.diagnostics(for: tree).first(where: { $0.diagMessage.severity == .error }) {
                let line = converter.location(for: error.position).line
                throw SchemaError(
                    .invalidSource, "\(source.path):\(line): \(error.message)",
                    location: TandemSchema.SourceLocation(file: source.path, line: line))
            }
            files.append(file)
        }
        var builder = ExtractionBuilder(index: SourceIndex(files: files), typeHints: typeHints, scope: scope)
        return try builder.build()
    }
}

/// One Swift source file's path (as reported in findings) and text.
public struct SourceText: Sendable, Hashable {
    public var path: String
    public var text: String

    public init(path: String, text: String) {
        self.path = path
        self.text = text
    }
}

/// What ``SchemaExtractor`` read from the sources.
public struct ExtractedSchema: Sendable {
    public var schema: Schema
    /// Declarations by model path: `Todo`, `Todo.title`, `Todo.people.age`, `Todo.priority.high`.
    public var locations: [String: TandemSchema.SourceLocation]
    /// `// tandem:allow` comments, by the path of the declaration they are written on.
    public var allowances: [SchemaAllowance]
}

extension SchemaError {
    init(_ code: Code, _ message: String, location: TandemSchema.SourceLocation) {
        self.init(code, message)
        self.location = location
    }
}

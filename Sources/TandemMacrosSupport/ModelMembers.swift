import SwiftSyntax
import SwiftSyntaxBuilder

/// The members `@Model` adds to a class, built from its ``ModelDeclaration``.
///
/// The names and signatures are the contract with the Tandem runtime: `PersistentModel`
/// requires exactly these members.
struct ModelMembers {
    let model: ModelDeclaration
    /// Whether the class is `final`. A non-final class has already been diagnosed; its
    /// initializer is made `required` so that the error does not cascade.
    let isFinal: Bool
    /// The model's first name (`@Model(originalName:)`), if it was renamed.
    let originalName: String?

    init(_ model: ModelDeclaration, isFinal: Bool, originalName: String? = nil) {
        self.model = model
        self.isFinal = isFinal
        self.originalName = originalName
    }

    /// All generated members, in the order they appear in the expansion.
    var declarations: [DeclSyntax] {
        var declarations = members
        if let originalName {
            declarations.append(DeclSyntax(stringLiteral: "public static var originalEntityName: String? { \(originalName.swiftStringLiteral) }"))
        }
        return declarations
    }

    private var members: [DeclSyntax] {
        [
            "public var persistentState = Tandem.PersistentState()",
            "private let _$observationRegistrar = Observation.ObservationRegistrar()",
            DeclSyntax(stringLiteral: schemaMetadata),
            DeclSyntax(
                stringLiteral: function(
                    "public \(isFinal ? "" : "required ")init(persistentRow row: Tandem.PersistentRow) throws",
                    lines: enumerated { "self.\($1.storageName) = try row.decode(at: \($0))" })),
            DeclSyntax(
                stringLiteral: function(
                    "public func encodePersistentValues(to row: inout Tandem.PersistentRowWriter) throws",
                    lines: enumerated { "try row.encode(self.\($1.storageName), at: \($0))" })),
            DeclSyntax(
                stringLiteral: function(
                    "public func refreshPersistentValues(from row: Tandem.PersistentRow) throws",
                    lines: enumerated { index, property in
                        "try _$observationRegistrar.withMutation(of: self, keyPath: \\.\(property.identifier.text)) "
                            + "{ self.\(property.storageName) = try row.decode(at: \(index)) }"
                    })),
        ]
    }

    /// `public static var schemaMetadata: [Tandem.PropertyMetadata] { [ ... ] }`.
    private var schemaMetadata: String {
        let entries = model.persisted.map { "        \(metadata(for: $0))," }
        let array = entries.isEmpty ? "    []" : (["    ["] + entries + ["    ]"]).joined(separator: "\n")
        return "public static var schemaMetadata: [Tandem.PropertyMetadata] {\n\(array)\n}"
    }

    /// One `Tandem.PropertyMetadata(...)` entry; arguments in the order keyPath, name,
    /// options, originalName, deleteRule, inverse, defaultValue, makeDefault.
    private func metadata(for property: PersistedProperty) -> String {
        var arguments = [
            "\\\(model.typeName).\(property.identifier.text)",
            "name: \(property.name.swiftStringLiteral)",
        ]
        if !property.options.isEmpty {
            arguments.append("options: [\(property.options.map(\.trimmedDescription).joined(separator: ", "))]")
        }
        if let originalName = property.originalName {
            arguments.append("originalName: \(originalName.trimmedDescription)")
        }
        if let deleteRule = property.deleteRule {
            arguments.append("deleteRule: \(deleteRule.trimmedDescription)")
        }
        if let inverse = property.inverse {
            arguments.append("inverse: \(inverse.trimmedDescription)")
        }
        if let initializer = property.initializer {
            arguments.append("defaultValue: \(initializer.trimmedDescription.swiftStringLiteral)")
            arguments.append("makeDefault: { \(initializer.trimmedDescription) }")
        }
        return "Tandem.PropertyMetadata(\(arguments.joined(separator: ", ")))"
    }

    private func enumerated(_ line: (Int, PersistedProperty) -> String) -> [String] {
        model.persisted.enumerated().map { line($0.offset, $0.element) }
    }

    private func function(_ signature: String, lines: [String]) -> String {
        let body = lines.map { "    \($0)\n" }.joined()
        return "\(signature) {\n\(body)}"
    }
}

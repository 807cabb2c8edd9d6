import SwiftSyntaxMacrosGenericTestSupport
import TandemMacrosSupport
import Testing

/// The errors `@Model` reports. Each names the property; a rejected property is left out of
/// the generated code, so there is one error per mistake.
@Suite struct ModelDiagnosticsTests {
    @Test(arguments: ["struct", "enum", "actor", "protocol"])
    func rejectsNonClass(keyword: String) {
        assertExpansion(
            "@Model \(keyword) Todo {\n}",
            expandedSource: "\(keyword) Todo {\n}",
            diagnostics: [DiagnosticSpec(message: "@Model can only be applied to a class", line: 1, column: 1)])
    }

    @Test func rejectsNonFinalClassWithFixItInsertingFinal() {
        assertExpansion(
            "@Model class Todo {\n}",
            expandedSource: """
                class Todo {

                \(emptyModelMembers(isFinal: false))
                }

                extension Todo: Tandem.PersistentModel, Observation.Observable {}
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "@Model classes must be 'final'", line: 1, column: 8,
                    fixIts: [FixItSpec(message: "insert 'final'")])
            ],
            fixedSource: "@Model final class Todo {\n}")
    }

    @Test func anOriginalNameAddsTheFirstNameAsOriginalEntityName() {
        assertExpansion(
            "@Model(originalName: \"Task\") final class Todo {\n}",
            expandedSource: """
                final class Todo {

                \(emptyModelMembers())

                    public static var originalEntityName: String? { "Task" }
                }

                extension Todo: Tandem.PersistentModel, Observation.Observable {}
                """)
    }

    @Test(arguments: ["first", "\"\"", "\"Ta\\(x)sk\""])
    func rejectsAnOriginalNameThatIsNotANonEmptyLiteral(argument: String) {
        assertExpansion(
            "@Model(originalName: \(argument)) final class Todo {\n}",
            expandedSource: """
                final class Todo {

                \(emptyModelMembers())
                }

                extension Todo: Tandem.PersistentModel, Observation.Observable {}
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "@Model(originalName:) takes the model's first name as a non-empty string literal, e.g. @Model(originalName: \"Task\")", line: 1, column: 22)
            ])
    }

    @Test func fixItInsertsFinalAfterExistingModifiers() {
        assertExpansion(
            "@Model public class Todo {\n}",
            expandedSource: """
                public class Todo {

                \(emptyModelMembers(isFinal: false))
                }

                extension Todo: Tandem.PersistentModel, Observation.Observable {}
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "@Model classes must be 'final'", line: 1, column: 15,
                    fixIts: [FixItSpec(message: "insert 'final'")])
            ],
            fixedSource: "@Model public final class Todo {\n}")
    }

    @Test func rejectsLetProperty() {
        assertPropertyRejected(
            "let code: String",
            message: "'let' property 'code' cannot be persisted: declare it 'var', or mark it @Transient",
            column: 5)
    }

    @Test(arguments: [
        (property: "@Transient var scratch: Int", expanded: "var scratch: Int", column: 20),
        (property: "@Transient let flag: Bool", expanded: "let flag: Bool", column: 20),
        (property: "@Transient var text: Optional<String>", expanded: "var text: Optional<String>", column: 20),
    ])
    func rejectsTransientPropertyWithoutDefaultValue(property: String, expanded: String, column: Int) {
        let name = String(property.split(separator: " ")[2].prefix { $0 != ":" })
        assertPropertyRejected(
            property,
            expanded: expanded,
            message: "@Transient property '\(name)' needs a default value",
            column: column)
    }

    @Test func rejectsPropertyObservers() {
        assertExpansion(
            """
            @Model final class Todo {
                var title: String = "" {
                    didSet { print(title) }
                }
            }
            """,
            expandedSource: expandedEmptyModel(
                members: """
                        var title: String = "" {
                            didSet { print(title) }
                        }
                    """),
            diagnostics: [
                DiagnosticSpec(
                    message: "property 'title' has observers; persisted properties cannot have willSet/didSet",
                    line: 3, column: 9)
            ])
    }

    @Test(arguments: [
        (property: "var a, b: Int", name: "a"),
        (property: "var (x, y) = (0, 0)", name: "(x, y)"),
    ])
    func rejectsSeveralPropertiesInOneDeclaration(property: String, name: String) {
        assertPropertyRejected(
            property, message: "declare persisted property '\(name)' on its own line", column: 9)
    }

    @Test func rejectsLazyProperty() {
        assertPropertyRejected(
            "lazy var cache = [Int]()",
            message: "'lazy' property 'cache' cannot be persisted; mark it @Transient",
            column: 5)
    }

    @Test(arguments: ["weak", "unowned"])
    func rejectsWeakAndUnownedProperties(keyword: String) {
        assertPropertyRejected(
            "\(keyword) var parent: Todo?",
            message: "'\(keyword)' property 'parent' cannot be persisted; mark it @Transient",
            column: 5)
    }

    @Test(arguments: [
        ("(Int) -> Void", "closures cannot be saved; mark it @Transient"),
        ("@Sendable () async -> Void", "closures cannot be saved; mark it @Transient"),
        ("(() -> Void)?", "closures cannot be saved; mark it @Transient"),
        ("[(Int) -> Void]", "closures cannot be saved; mark it @Transient"),
        ("Optional<() -> Void>", "closures cannot be saved; mark it @Transient"),
        ("(Int, String)", "store a Codable struct instead of a tuple, or mark it @Transient"),
        ("[String: (Int, Int)]", "store a Codable struct instead of a tuple, or mark it @Transient"),
        ("Any", "store a concrete Codable type, or mark it @Transient"),
        ("AnyObject?", "store a concrete Codable type, or mark it @Transient"),
        ("[String: Any]", "store a concrete Codable type, or mark it @Transient"),
        ("any Codable", "store a concrete Codable type, or mark it @Transient"),
        ("Codable & Sendable", "store a concrete Codable type, or mark it @Transient"),
        ("some Codable", "store a concrete Codable type, or mark it @Transient"),
        ("Int.Type", "metatypes cannot be saved; mark it @Transient"),
        ("[any Codable.Type]?", "store a concrete Codable type, or mark it @Transient"),
    ])
    func rejectsTypesThatCanNeverBeStored(type: String, hint: String) {
        assertPropertyRejected(
            "var value: \(type)",
            message: "property 'value' has type '\(type)', which cannot be stored; \(hint)",
            column: 16)
    }

    @Test(arguments: [
        (property: "var persistentState: Int = 0", name: "persistentState"),
        (property: "var _$cache: Int = 0", name: "_$cache"),
        (property: "@Transient var _$scratch = 0", name: "_$scratch"),
    ])
    func rejectsReservedPropertyNames(property: String, name: String) {
        let column = property.hasPrefix("@Transient") ? 20 : 9
        assertPropertyRejected(
            property,
            expanded: property.hasPrefix("@Transient ") ? String(property.dropFirst("@Transient ".count)) : property,
            message: "property name '\(name)' is reserved by @Model; rename the property",
            column: column)
    }

    @Test func leavesRejectedPropertyOutAndNumbersTheOthersWithoutIt() {
        assertExpansion(
            """
            @Model final class Todo {
                let code: String
                lazy var cache = 0
                var title: String
            }
            """,
            expandedSource: #"""
                final class Todo {
                    let code: String
                    lazy var cache = 0
                    @_PersistedProperty(index: 0)
                    var title: String

                    public var persistentState = Tandem.PersistentState()

                    private let _$observationRegistrar = Observation.ObservationRegistrar()

                    public static var schemaMetadata: [Tandem.PropertyMetadata] {
                        [
                            Tandem.PropertyMetadata(\Todo.title, name: "title"),
                        ]
                    }

                    public init(persistentRow row: Tandem.PersistentRow) throws {
                        self._title = try row.decode(at: 0)
                    }

                    public func encodePersistentValues(to row: inout Tandem.PersistentRowWriter) throws {
                        try row.encode(self._title, at: 0)
                    }

                    public func refreshPersistentValues(from row: Tandem.PersistentRow) throws {
                        try _$observationRegistrar.withMutation(of: self, keyPath: \.title) { self._title = try row.decode(at: 0) }
                    }
                }

                extension Todo: Tandem.PersistentModel, Observation.Observable {}
                """#,
            diagnostics: [
                DiagnosticSpec(
                    message: "'let' property 'code' cannot be persisted: declare it 'var', or mark it @Transient",
                    line: 2, column: 5),
                DiagnosticSpec(
                    message: "'lazy' property 'cache' cannot be persisted; mark it @Transient",
                    line: 3, column: 5),
            ],
            macros: modelMacrosOnly)
    }

    @Test(arguments: [
        "@Transient let id = 1",
        "@Transient lazy var cache = [Int]()",
        "@Transient var callback: (() -> Void)? = nil",
        "@Transient var scratch: Int = 0 { didSet {} }",
        "var total: Int { 0 }",
        "var both: Int { get { 0 } set {} }",
        "static let shared = 0",
        "class var kind: String { \"todo\" }",
    ])
    func acceptsPropertiesThatAreNotPersisted(property: String) {
        let expanded = property.hasPrefix("@Transient ") ? String(property.dropFirst("@Transient ".count)) : property
        assertExpansion(
            "@Model final class Todo {\n    \(property)\n}",
            expandedSource: expandedEmptyModel(members: "    \(expanded)"))
    }

    /// Expands `@Model final class Todo { <property> }` and expects one error on line 2.
    private func assertPropertyRejected(
        _ property: String,
        expanded: String? = nil,
        message: String,
        column: Int,
        sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) {
        assertExpansion(
            "@Model final class Todo {\n    \(property)\n}",
            expandedSource: expandedEmptyModel(members: "    \(expanded ?? property)"),
            diagnostics: [DiagnosticSpec(message: message, line: 2, column: column)],
            sourceLocation: sourceLocation)
    }
}

import SwiftSyntaxMacroExpansion
import TandemMacrosSupport
import Testing

/// `@Model`'s member, member-attribute and extension roles on valid classes.
@Suite struct ModelMacroExpansionTests {
    @Test func addsPersistedPropertyAttributesAndRuntimeMembersToModel() {
        assertExpansion(
            """
            @Model final class Todo {
                @Attribute(.unique) var code: String
                var title: String
                private var weightRaw: Double?
                var tags: [String] = []
                @Attribute(originalName: "created") var timestamp: Date = .now
                var count = 0
                @Transient var scratch = 0
                var isHeavy: Bool { (weightRaw ?? 0) > 80 }
                static var shared = 1
                init(code: String, title: String) { self.code = code; self.title = title }
            }
            """,
            expandedSource: #"""
                final class Todo {
                    @_PersistedProperty(index: 0) var code: String
                    @_PersistedProperty(index: 1)
                    var title: String
                    @_PersistedProperty(index: 2)
                    private var weightRaw: Double?
                    @_PersistedProperty(index: 3)
                    var tags: [String] = []
                    @_PersistedProperty(index: 4) var timestamp: Date = .now
                    @_PersistedProperty(index: 5)
                    var count = 0
                    var scratch = 0
                    var isHeavy: Bool { (weightRaw ?? 0) > 80 }
                    static var shared = 1
                    init(code: String, title: String) { self.code = code; self.title = title }

                    public var persistentState = Tandem.PersistentState()

                    private let _$observationRegistrar = Observation.ObservationRegistrar()

                    public static var schemaMetadata: [Tandem.PropertyMetadata] {
                        [
                            Tandem.PropertyMetadata(\Todo.code, name: "code", options: [.unique]),
                            Tandem.PropertyMetadata(\Todo.title, name: "title"),
                            Tandem.PropertyMetadata(\Todo.weightRaw, name: "weightRaw"),
                            Tandem.PropertyMetadata(\Todo.tags, name: "tags", defaultValue: "[]", makeDefault: { [] }),
                            Tandem.PropertyMetadata(\Todo.timestamp, name: "timestamp", originalName: "created", defaultValue: ".now", makeDefault: { .now }),
                            Tandem.PropertyMetadata(\Todo.count, name: "count", defaultValue: "0", makeDefault: { 0 }),
                        ]
                    }

                    public init(persistentRow row: Tandem.PersistentRow) throws {
                        self._code = try row.decode(at: 0)
                        self._title = try row.decode(at: 1)
                        self._weightRaw = try row.decode(at: 2)
                        self._tags = try row.decode(at: 3)
                        self._timestamp = try row.decode(at: 4)
                        self._count = try row.decode(at: 5)
                    }

                    public func encodePersistentValues(to row: inout Tandem.PersistentRowWriter) throws {
                        try row.encode(self._code, at: 0)
                        try row.encode(self._title, at: 1)
                        try row.encode(self._weightRaw, at: 2)
                        try row.encode(self._tags, at: 3)
                        try row.encode(self._timestamp, at: 4)
                        try row.encode(self._count, at: 5)
                    }

                    public func refreshPersistentValues(from row: Tandem.PersistentRow) throws {
                        try _$observationRegistrar.withMutation(of: self, keyPath: \.code) { self._code = try row.decode(at: 0) }
                        try _$observationRegistrar.withMutation(of: self, keyPath: \.title) { self._title = try row.decode(at: 1) }
                        try _$observationRegistrar.withMutation(of: self, keyPath: \.weightRaw) { self._weightRaw = try row.decode(at: 2) }
                        try _$observationRegistrar.withMutation(of: self, keyPath: \.tags) { self._tags = try row.decode(at: 3) }
                        try _$observationRegistrar.withMutation(of: self, keyPath: \.timestamp) { self._timestamp = try row.decode(at: 4) }
                        try _$observationRegistrar.withMutation(of: self, keyPath: \.count) { self._count = try row.decode(at: 5) }
                    }
                }

                extension Todo: Tandem.PersistentModel, Observation.Observable {}
                """#,
            macros: modelMacrosOnly)
    }

    @Test func expandsStoredPropertiesIntoTrackedAccessorsWithPrivateStorage() {
        assertExpansion(
            """
            @Model final class Tag {
                @Attribute(.unique) var name: String
                var uses = 0
                init(name: String) { self.name = name }
            }
            """,
            expandedSource: #"""
                final class Tag {
                    var name: String {
                        @storageRestrictions(initializes: _name)
                        init(initialValue) {
                            _name = initialValue
                        }
                        get {
                            _$observationRegistrar.access(self, keyPath: \.name)
                            persistentWillAccess(0, &_name)
                            return _name
                        }
                        set {
                            persistentWillAccess(0, &_name)
                            let oldValue = _name
                            _$observationRegistrar.withMutation(of: self, keyPath: \.name) {
                                _name = newValue
                            }
                            persistentDidSet(0, from: oldValue, to: newValue)
                        }
                    }

                    private var _name: String
                    var uses {
                        @storageRestrictions(initializes: _uses)
                        init(initialValue) {
                            _uses = initialValue
                        }
                        get {
                            _$observationRegistrar.access(self, keyPath: \.uses)
                            persistentWillAccess(1, &_uses)
                            return _uses
                        }
                        set {
                            persistentWillAccess(1, &_uses)
                            let oldValue = _uses
                            _$observationRegistrar.withMutation(of: self, keyPath: \.uses) {
                                _uses = newValue
                            }
                            persistentDidSet(1, from: oldValue, to: newValue)
                        }
                    }

                    private var _uses = 0
                    init(name: String) { self.name = name }

                    public var persistentState = Tandem.PersistentState()

                    private let _$observationRegistrar = Observation.ObservationRegistrar()

                    public static var schemaMetadata: [Tandem.PropertyMetadata] {
                        [
                            Tandem.PropertyMetadata(\Tag.name, name: "name", options: [.unique]),
                            Tandem.PropertyMetadata(\Tag.uses, name: "uses", defaultValue: "0", makeDefault: { 0 }),
                        ]
                    }

                    public init(persistentRow row: Tandem.PersistentRow) throws {
                        self._name = try row.decode(at: 0)
                        self._uses = try row.decode(at: 1)
                    }

                    public func encodePersistentValues(to row: inout Tandem.PersistentRowWriter) throws {
                        try row.encode(self._name, at: 0)
                        try row.encode(self._uses, at: 1)
                    }

                    public func refreshPersistentValues(from row: Tandem.PersistentRow) throws {
                        try _$observationRegistrar.withMutation(of: self, keyPath: \.name) { self._name = try row.decode(at: 0) }
                        try _$observationRegistrar.withMutation(of: self, keyPath: \.uses) { self._uses = try row.decode(at: 1) }
                    }
                }

                extension Tag: Tandem.PersistentModel, Observation.Observable {}
                """#)
    }

    @Test func generatesEmptyMembersForClassWithoutPersistedProperties() {
        assertExpansion(
            """
            @Model final class Empty {
                @Transient var scratch = 0
                var computed: Int { 1 }
            }
            """,
            expandedSource: """
                final class Empty {
                    var scratch = 0
                    var computed: Int { 1 }

                    public var persistentState = Tandem.PersistentState()

                    private let _$observationRegistrar = Observation.ObservationRegistrar()

                    public static var schemaMetadata: [Tandem.PropertyMetadata] {
                        []
                    }

                    public init(persistentRow row: Tandem.PersistentRow) throws {
                    }

                    public func encodePersistentValues(to row: inout Tandem.PersistentRowWriter) throws {
                    }

                    public func refreshPersistentValues(from row: Tandem.PersistentRow) throws {
                    }
                }

                extension Empty: Tandem.PersistentModel, Observation.Observable {}
                """)
        // The shared helper used by the diagnostic tests has the same layout.
        assertExpansion(
            "@Model final class Empty {\n    var computed: Int { 1 }\n}",
            expandedSource: expandedEmptyModel("Empty", members: "    var computed: Int { 1 }"))
    }

    @Test func escapesDefaultValueSourceAsStringLiteral() {
        assertExpansion(
            #"""
            @Model final class Note {
                var text: String = "a\"b\\c"
            }
            """#,
            expandedSource: #"""
                final class Note {
                    @_PersistedProperty(index: 0)
                    var text: String = "a\"b\\c"

                    public var persistentState = Tandem.PersistentState()

                    private let _$observationRegistrar = Observation.ObservationRegistrar()

                    public static var schemaMetadata: [Tandem.PropertyMetadata] {
                        [
                            Tandem.PropertyMetadata(\Note.text, name: "text", defaultValue: "\"a\\\"b\\\\c\"", makeDefault: { "a\"b\\c" }),
                        ]
                    }

                    public init(persistentRow row: Tandem.PersistentRow) throws {
                        self._text = try row.decode(at: 0)
                    }

                    public func encodePersistentValues(to row: inout Tandem.PersistentRowWriter) throws {
                        try row.encode(self._text, at: 0)
                    }

                    public func refreshPersistentValues(from row: Tandem.PersistentRow) throws {
                        try _$observationRegistrar.withMutation(of: self, keyPath: \.text) { self._text = try row.decode(at: 0) }
                    }
                }

                extension Note: Tandem.PersistentModel, Observation.Observable {}
                """#,
            macros: modelMacrosOnly)
    }

    @Test func escapesLineBreaksOfMultiLineDefaultValue() {
        assertExpansion(
            """
            @Model final class Note {
                var tags: [String] = [
                    "a",
                ]
            }
            """,
            expandedSource: #"""
                final class Note {
                    @_PersistedProperty(index: 0)
                    var tags: [String] = [
                        "a",
                    ]

                    public var persistentState = Tandem.PersistentState()

                    private let _$observationRegistrar = Observation.ObservationRegistrar()

                    public static var schemaMetadata: [Tandem.PropertyMetadata] {
                        [
                            Tandem.PropertyMetadata(\Note.tags, name: "tags", defaultValue: "[\n        \"a\",\n    ]", makeDefault: { [
                            "a",
                        ] }),
                        ]
                    }

                    public init(persistentRow row: Tandem.PersistentRow) throws {
                        self._tags = try row.decode(at: 0)
                    }

                    public func encodePersistentValues(to row: inout Tandem.PersistentRowWriter) throws {
                        try row.encode(self._tags, at: 0)
                    }

                    public func refreshPersistentValues(from row: Tandem.PersistentRow) throws {
                        try _$observationRegistrar.withMutation(of: self, keyPath: \.tags) { self._tags = try row.decode(at: 0) }
                    }
                }

                extension Note: Tandem.PersistentModel, Observation.Observable {}
                """#,
            macros: modelMacrosOnly)
    }

    @Test func copiesRelationshipDeleteRuleAndInverseVerbatim() {
        assertExpansion(
            """
            @Model final class Category {
                @Relationship(deleteRule: .cascade, inverse: \\Article.category) var articles: [Article] = []
                var parent: Category?
            }
            """,
            expandedSource: #"""
                final class Category {
                    @_PersistedProperty(index: 0) var articles: [Article] = []
                    @_PersistedProperty(index: 1)
                    var parent: Category?

                    public var persistentState = Tandem.PersistentState()

                    private let _$observationRegistrar = Observation.ObservationRegistrar()

                    public static var schemaMetadata: [Tandem.PropertyMetadata] {
                        [
                            Tandem.PropertyMetadata(\Category.articles, name: "articles", deleteRule: .cascade, inverse: \Article.category, defaultValue: "[]", makeDefault: { [] }),
                            Tandem.PropertyMetadata(\Category.parent, name: "parent"),
                        ]
                    }

                    public init(persistentRow row: Tandem.PersistentRow) throws {
                        self._articles = try row.decode(at: 0)
                        self._parent = try row.decode(at: 1)
                    }

                    public func encodePersistentValues(to row: inout Tandem.PersistentRowWriter) throws {
                        try row.encode(self._articles, at: 0)
                        try row.encode(self._parent, at: 1)
                    }

                    public func refreshPersistentValues(from row: Tandem.PersistentRow) throws {
                        try _$observationRegistrar.withMutation(of: self, keyPath: \.articles) { self._articles = try row.decode(at: 0) }
                        try _$observationRegistrar.withMutation(of: self, keyPath: \.parent) { self._parent = try row.decode(at: 1) }
                    }
                }

                extension Category: Tandem.PersistentModel, Observation.Observable {}
                """#,
            macros: modelMacrosOnly)
    }

    @Test func copiesAttributeOptionsAndOriginalNameVerbatim() {
        assertExpansion(
            """
            @Model final class Item {
                @Attribute(.unique, .preserveValueOnDeletion, originalName: "legacy_code") var code: String
                @Attribute var plain: Int = 1
            }
            """,
            expandedSource: #"""
                final class Item {
                    @_PersistedProperty(index: 0) var code: String
                    @_PersistedProperty(index: 1) var plain: Int = 1

                    public var persistentState = Tandem.PersistentState()

                    private let _$observationRegistrar = Observation.ObservationRegistrar()

                    public static var schemaMetadata: [Tandem.PropertyMetadata] {
                        [
                            Tandem.PropertyMetadata(\Item.code, name: "code", options: [.unique, .preserveValueOnDeletion], originalName: "legacy_code"),
                            Tandem.PropertyMetadata(\Item.plain, name: "plain", defaultValue: "1", makeDefault: { 1 }),
                        ]
                    }

                    public init(persistentRow row: Tandem.PersistentRow) throws {
                        self._code = try row.decode(at: 0)
                        self._plain = try row.decode(at: 1)
                    }

                    public func encodePersistentValues(to row: inout Tandem.PersistentRowWriter) throws {
                        try row.encode(self._code, at: 0)
                        try row.encode(self._plain, at: 1)
                    }

                    public func refreshPersistentValues(from row: Tandem.PersistentRow) throws {
                        try _$observationRegistrar.withMutation(of: self, keyPath: \.code) { self._code = try row.decode(at: 0) }
                        try _$observationRegistrar.withMutation(of: self, keyPath: \.plain) { self._plain = try row.decode(at: 1) }
                    }
                }

                extension Item: Tandem.PersistentModel, Observation.Observable {}
                """#,
            macros: modelMacrosOnly)
    }

    @Test func keepsExistingPersistedPropertyAttributeAndItsIndex() {
        assertExpansion(
            """
            @Model final class Item {
                @_PersistedProperty(index: 0) var first: Int
                var second: Int
            }
            """,
            expandedSource: #"""
                final class Item {
                    @_PersistedProperty(index: 0) var first: Int
                    @_PersistedProperty(index: 1)
                    var second: Int

                    public var persistentState = Tandem.PersistentState()

                    private let _$observationRegistrar = Observation.ObservationRegistrar()

                    public static var schemaMetadata: [Tandem.PropertyMetadata] {
                        [
                            Tandem.PropertyMetadata(\Item.first, name: "first"),
                            Tandem.PropertyMetadata(\Item.second, name: "second"),
                        ]
                    }

                    public init(persistentRow row: Tandem.PersistentRow) throws {
                        self._first = try row.decode(at: 0)
                        self._second = try row.decode(at: 1)
                    }

                    public func encodePersistentValues(to row: inout Tandem.PersistentRowWriter) throws {
                        try row.encode(self._first, at: 0)
                        try row.encode(self._second, at: 1)
                    }

                    public func refreshPersistentValues(from row: Tandem.PersistentRow) throws {
                        try _$observationRegistrar.withMutation(of: self, keyPath: \.first) { self._first = try row.decode(at: 0) }
                        try _$observationRegistrar.withMutation(of: self, keyPath: \.second) { self._second = try row.decode(at: 1) }
                    }
                }

                extension Item: Tandem.PersistentModel, Observation.Observable {}
                """#,
            macros: modelMacrosOnly)
    }

    @Test func usesEscapedIdentifierInKeyPathsAndPlainNameInMetadata() {
        assertExpansion(
            """
            @Model final class Item {
                var `default`: Int = 0
            }
            """,
            expandedSource: #"""
                final class Item {
                    @_PersistedProperty(index: 0)
                    var `default`: Int = 0

                    public var persistentState = Tandem.PersistentState()

                    private let _$observationRegistrar = Observation.ObservationRegistrar()

                    public static var schemaMetadata: [Tandem.PropertyMetadata] {
                        [
                            Tandem.PropertyMetadata(\Item.`default`, name: "default", defaultValue: "0", makeDefault: { 0 }),
                        ]
                    }

                    public init(persistentRow row: Tandem.PersistentRow) throws {
                        self._default = try row.decode(at: 0)
                    }

                    public func encodePersistentValues(to row: inout Tandem.PersistentRowWriter) throws {
                        try row.encode(self._default, at: 0)
                    }

                    public func refreshPersistentValues(from row: Tandem.PersistentRow) throws {
                        try _$observationRegistrar.withMutation(of: self, keyPath: \.`default`) { self._default = try row.decode(at: 0) }
                    }
                }

                extension Item: Tandem.PersistentModel, Observation.Observable {}
                """#,
            macros: modelMacrosOnly)
    }

    @Test func expandsModelNestedInVersionedNamespace() {
        assertExpansion(
            """
            enum V1 {
                @Model final class Note {
                    var text: String = ""
                }
            }
            """,
            expandedSource: #"""
                enum V1 {
                    final class Note {
                        @_PersistedProperty(index: 0)
                        var text: String = ""

                        public var persistentState = Tandem.PersistentState()

                        private let _$observationRegistrar = Observation.ObservationRegistrar()

                        public static var schemaMetadata: [Tandem.PropertyMetadata] {
                            [
                                Tandem.PropertyMetadata(\Note.text, name: "text", defaultValue: "\"\"", makeDefault: { "" }),
                            ]
                        }

                        public init(persistentRow row: Tandem.PersistentRow) throws {
                            self._text = try row.decode(at: 0)
                        }

                        public func encodePersistentValues(to row: inout Tandem.PersistentRowWriter) throws {
                            try row.encode(self._text, at: 0)
                        }

                        public func refreshPersistentValues(from row: Tandem.PersistentRow) throws {
                            try _$observationRegistrar.withMutation(of: self, keyPath: \.text) { self._text = try row.decode(at: 0) }
                        }
                    }
                }

                extension V1.Note: Tandem.PersistentModel, Observation.Observable {}
                """#,
            macros: modelMacrosOnly)
    }

    @Test func leavesTransientOptionalWithoutInitializerOutOfStore() {
        assertExpansion(
            """
            @Model final class Item {
                @Transient var cache: [Int]?
                @Transient var loader: (() -> Void)? = nil
            }
            """,
            expandedSource: expandedEmptyModel(
                "Item",
                members: """
                        var cache: [Int]?
                        var loader: (() -> Void)? = nil
                    """))
    }

    @Test(arguments: [
        ([] as [String], ""),
        (["PersistentModel"], "\n\nextension Todo: Tandem.PersistentModel {}"),
        (["Observable"], "\n\nextension Todo: Observation.Observable {}"),
    ])
    func addsOnlyTheConformancesTheCompilerAsksFor(conformances: [String], expectedExtension: String) {
        var macros = allMacros
        macros["Model"] = MacroSpec(type: ModelMacro.self, conformances: conformances.map { "\(raw: $0)" })
        assertExpansion(
            "@Model final class Todo {\n}",
            expandedSource: """
                final class Todo {

                \(emptyModelMembers())
                }\(expectedExtension)
                """,
            macros: macros)
    }
}

import TandemMacrosSupport
import Testing

/// `@_PersistedProperty(index:)`: the accessors and the `_name` storage peer.
@Suite struct PersistedPropertyMacroTests {
    @Test func expandsStoredPropertyIntoObservedAccessorsAndPrivateStorage() {
        assertExpansion(
            """
            @_PersistedProperty(index: 7)
            var title: String
            """,
            expandedSource: #"""
                var title: String {
                    @storageRestrictions(initializes: _title)
                    init(initialValue) {
                        _title = initialValue
                    }
                    get {
                        _$observationRegistrar.access(self, keyPath: \.title)
                        persistentWillAccess(7, &_title)
                        return _title
                    }
                    set {
                        persistentWillAccess(7, &_title)
                        let oldValue = _title
                        _$observationRegistrar.withMutation(of: self, keyPath: \.title) {
                            _title = newValue
                        }
                        persistentDidSet(7, from: oldValue, to: newValue)
                    }
                }

                private var _title: String
                """#)
    }

    @Test(arguments: [
        (property: "var tags: [String] = []", name: "tags", storage: "private var _tags: [String] = []"),
        (property: "var count = 0", name: "count", storage: "private var _count = 0"),
        (property: "var weight: Double?", name: "weight", storage: "private var _weight: Double?"),
    ])
    func keepsTypeAnnotationAndInitializerOnStorage(property: String, name: String, storage: String) {
        // The test harness drops the initializer of the property it gives accessors to.
        let declaration = property.split(separator: " =").first!
        assertExpansion(
            "@_PersistedProperty(index: 0) \(property)",
            expandedSource: """
                \(declaration) {
                    @storageRestrictions(initializes: _\(name))
                    init(initialValue) {
                        _\(name) = initialValue
                    }
                    get {
                        _$observationRegistrar.access(self, keyPath: \\.\(name))
                        persistentWillAccess(0, &_\(name))
                        return _\(name)
                    }
                    set {
                        persistentWillAccess(0, &_\(name))
                        let oldValue = _\(name)
                        _$observationRegistrar.withMutation(of: self, keyPath: \\.\(name)) {
                            _\(name) = newValue
                        }
                        persistentDidSet(0, from: oldValue, to: newValue)
                    }
                }

                \(storage)
                """)
    }

    @Test func dropsAttributesAndModifiersFromStorage() {
        assertExpansion(
            """
            @Attribute(.unique) @_PersistedProperty(index: 0) public private(set) var code: String
            """,
            expandedSource: #"""
                public private(set) var code: String {
                    @storageRestrictions(initializes: _code)
                    init(initialValue) {
                        _code = initialValue
                    }
                    get {
                        _$observationRegistrar.access(self, keyPath: \.code)
                        persistentWillAccess(0, &_code)
                        return _code
                    }
                    set {
                        persistentWillAccess(0, &_code)
                        let oldValue = _code
                        _$observationRegistrar.withMutation(of: self, keyPath: \.code) {
                            _code = newValue
                        }
                        persistentDidSet(0, from: oldValue, to: newValue)
                    }
                }

                private var _code: String
                """#)
    }

    @Test(arguments: [
        "var computed: Int { 1 }",
        "let constant: Int",
        "@Transient var scratch = 0",
    ])
    func expandsToNothingOnPropertiesModelDoesNotPersist(property: String) {
        var expected = property
        if expected.hasPrefix("@Transient ") {
            expected.removeFirst("@Transient ".count)
        }
        assertExpansion("@_PersistedProperty(index: 0) \(property)", expandedSource: expected)
    }
}

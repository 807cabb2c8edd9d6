/// The members `@Model` generates for a class none of whose properties are persisted, as
/// they appear in the expanded source (indented one level inside the class).
///
/// The layout is spelled out in full once, in
/// `ModelMacroExpansionTests.generatesEmptyMembersForClassWithoutPersistedProperties`; the
/// diagnostic tests use this helper where the offending property is left out.
///
/// - Parameter isFinal: `false` for a class `@Model` rejected for not being `final`: its
///   initializer is then `required`, so that no further error follows.
func emptyModelMembers(isFinal: Bool = true) -> String {
    """
        public var persistentState = Tandem.PersistentState()

        private let _$observationRegistrar = Observation.ObservationRegistrar()

        public static var schemaMetadata: [Tandem.PropertyMetadata] {
            []
        }

        public \(isFinal ? "" : "required ")init(persistentRow row: Tandem.PersistentRow) throws {
        }

        public func encodePersistentValues(to row: inout Tandem.PersistentRowWriter) throws {
        }

        public func refreshPersistentValues(from row: Tandem.PersistentRow) throws {
        }
    """
}

/// The expanded source of `@Model final class <name> { <members> }` whose properties are
/// all left out of the store.
func expandedEmptyModel(_ name: String = "Todo", members: String) -> String {
    """
    final class \(name) {
    \(members)

    \(emptyModelMembers())
    }

    extension \(name): Tandem.PersistentModel, Observation.Observable {}
    """
}

// Relationship properties in generated `init(persistentRow:)` / `encodePersistentValues(to:)`:
// the storage starts empty and loads lazily; a to-one writes its destination's UUID.

extension PersistentRow {
    /// A to-one relationship: `nil` until first accessed (its foreign key is kept by the store).
    public func decode<M: PersistentModel>(at index: Int) throws -> M? { nil }

    /// A to-many relationship: empty until first accessed.
    public func decode<M: PersistentModel>(at index: Int) throws -> [M] { [] }
}

extension PersistentRowWriter {
    /// A to-one relationship: the destination's UUID, or the stored foreign key when the
    /// relationship was never loaded.
    public mutating func encode<M: PersistentModel>(_ value: M?, at index: Int) throws {
        let parameter = parameters[index]
        guard parameter != 0 else { return }
        let uuid = value.map(\.uuidAssigningIfNeeded) ?? (loadedRelationships.contains(index) ? nil : foreignKeys[index])
        let code =
            try uuid.map { try $0.sqliteBind(to: statement, at: parameter) }
            ?? DatabaseValue.null.sqliteBind(to: statement, at: parameter)
        if code != 0 { throw StoreError(.sqlite, "binding \(mapping.name).\(mapping.properties[index].name) failed with code \(code)") }
    }

    /// A to-many relationship has no column: its inverse's foreign keys or a join table hold it.
    public mutating func encode<M: PersistentModel>(_ value: [M], at index: Int) throws {}
}

internal import TandemLocking

/// Works out each relationship's destination, cardinality and inverse from the models'
/// metadata, as SwiftData does: an explicit `inverse:` wins; otherwise the inverse is inferred
/// when exactly one relationship on each side points at the other entity.
enum RelationshipResolver {
    /// The relationships of `type`, in property order.
    ///
    /// - Parameter known: every model type of the container, or `nil` to accept any
    ///   destination (used for in-memory inverse maintenance before insertion).
    static func relationships(of type: any PersistentModel.Type, among known: [any PersistentModel.Type]?) throws -> [Schema.Relationship] {
        let entity = type.entityName
        var result: [Schema.Relationship] = []
        for property in type.schemaMetadata {
            guard let target = property.relationship else { continue }
            let destination = target.destination
            if let known, !known.contains(where: { ObjectIdentifier($0) == ObjectIdentifier(destination) }) {
                throw StoreError(
                    .invalidModel, "relationship \(entity).\(property.name) points at \(destination.entityName), which is not one of the container's models; pass it to ModelContainer(for:) too",
                    entity: entity, attribute: property.name)
            }
            if !target.isToMany && !target.isOptional {
                throw StoreError(
                    .invalidModel, "to-one relationship \(entity).\(property.name) must be optional (\(destination.entityName)?): a related object can be deleted, or arrive later through sync",
                    entity: entity, attribute: property.name)
            }
            let inverse = try inverseName(of: property, in: type, destination: destination)
            result.append(
                Schema.Relationship(
                    name: property.name, destination: destination.entityName,
                    cardinality: target.isToMany ? .toMany : .toOne, inverse: inverse,
                    deleteRule: property.deleteRule, isOptional: !target.isToMany,
                    originalName: property.originalName))
        }
        return result
    }

    private static func inverseName(
        of property: PropertyMetadata, in type: any PersistentModel.Type,
        destination: any PersistentModel.Type
    ) throws -> String? {
        let entity = type.entityName
        let theirs = destination.schemaMetadata.filter {
            $0.relationship.map { ObjectIdentifier($0.destination) == ObjectIdentifier(type) } ?? false
        }
        if let declared = property.inverse {
            guard let match = theirs.first(where: { $0.keyPath == declared }) else {
                throw StoreError(
                    .invalidModel, "the inverse of \(entity).\(property.name) must be a relationship of \(destination.entityName) pointing back at \(entity)",
                    entity: entity, attribute: property.name)
            }
            return match.name
        }
        // The other side may name this property as its inverse.
        if let pointing = theirs.first(where: { $0.inverse == property.keyPath }) { return pointing.name }
        let mine = type.schemaMetadata.filter {
            $0.relationship.map { ObjectIdentifier($0.destination) == ObjectIdentifier(destination) } ?? false
        }
        // Inferred only when unambiguous and the candidate does not declare another inverse.
        if mine.count == 1, theirs.count == 1, theirs[0].inverse == nil,
            !(ObjectIdentifier(destination) == ObjectIdentifier(type) && theirs[0].name == property.name)
        {
            return theirs[0].name
        }
        return nil
    }

    /// A relationship property and its inverse on the destination, for in-memory inverse
    /// maintenance (which works before objects are inserted, so it cannot ask a container).
    struct Entry: @unchecked Sendable {
        // @unchecked: `inverseKeyPath` is an immutable key path.
        let relationship: Schema.Relationship
        let inverseKeyPath: AnyKeyPath?
        let inverseIsToMany: Bool
    }

    private static let cache = Locked<[ObjectIdentifier: [Int: Entry]]>([:])

    /// Relationship entries by property index, computed once per model type.
    static func entries(of type: any PersistentModel.Type) -> [Int: Entry] {
        if let hit = cache.withLock({ $0[ObjectIdentifier(type)] }) { return hit }
        var entries: [Int: Entry] = [:]
        let relationships = (try? relationships(of: type, among: nil)) ?? []
        var ordinal = 0
        for (index, property) in type.schemaMetadata.enumerated() {
            guard let target = property.relationship, ordinal < relationships.count else { continue }
            let relationship = relationships[ordinal]
            ordinal += 1
            let inverse = relationship.inverse.flatMap { name in target.destination.schemaMetadata.first { $0.name == name } }
            entries[index] = Entry(
                relationship: relationship, inverseKeyPath: inverse?.keyPath,
                inverseIsToMany: inverse?.relationship?.isToMany ?? false)
        }
        cache.withLock { $0[ObjectIdentifier(type)] = entries }
        return entries
    }
}

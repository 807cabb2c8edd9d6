// What generated accessors call: change tracking for attributes; lazy loading and inverse
// maintenance for relationships (chosen by overload on the property's type).

extension PersistentModel {
    /// Called by a generated getter before it returns the storage. Attributes: nothing.
    @inlinable @inline(__always)
    public func persistentWillAccess<V>(_ index: Int, _ storage: inout V) {}

    /// Called by a generated setter after the storage changed. Attributes: change tracking.
    @inlinable @inline(__always)
    public func persistentDidSet<V>(_ index: Int, from oldValue: V, to newValue: V) {
        persistentDidChange(index)
    }

    /// A to-one relationship: loads the destination on first access (from the identity map,
    /// or one query).
    public func persistentWillAccess<M: PersistentModel>(_ index: Int, _ storage: inout M?) {
        guard needsLoading(index) else { return }
        persistentState.loadedRelationships.insert(index)
        guard let uuid = persistentState.foreignKeys[index], let context = persistentState.context else {
            storage = nil  // cleared in the store (its destination was deleted)
            return
        }
        storage = context.resolveToOne(M.self, uuid: uuid)
    }

    /// A to-many relationship: loads the related objects on first access (one query).
    public func persistentWillAccess<M: PersistentModel>(_ index: Int, _ storage: inout [M]) {
        guard needsLoading(index) else { return }
        persistentState.loadedRelationships.insert(index)
        guard let context = persistentState.context else { return }
        storage = context.loadToMany(M.self, owner: self, property: index)
    }

    /// A to-one relationship was set: record the foreign key, insert the destination into this
    /// object's context if it is in none, and update the inverse in memory.
    public func persistentDidSet<M: PersistentModel>(_ index: Int, from oldValue: M?, to newValue: M?) {
        persistentState.loadedRelationships.insert(index)
        if let newValue {
            persistentState.foreignKeys[index] = newValue.uuidAssigningIfNeeded
        } else {
            persistentState.foreignKeys[index] = nil
        }
        guard !persistentState.isFilling else { return }
        persistentDidChange(index)
        if let newValue { joinContexts(with: newValue) }
        guard oldValue !== newValue, let entry = RelationshipResolver.entries(of: Self.self)[index],
            let inverse = entry.inverseKeyPath
        else { return }
        if let oldValue { Self.unlink(self, from: oldValue, inverse: inverse, toMany: entry.inverseIsToMany) }
        if let newValue { Self.link(self, to: newValue, inverse: inverse, toMany: entry.inverseIsToMany) }
    }

    /// A to-many relationship was set: insert new members into this object's context and
    /// update their inverse in memory.
    public func persistentDidSet<M: PersistentModel>(_ index: Int, from oldValue: [M], to newValue: [M]) {
        persistentState.loadedRelationships.insert(index)
        guard !persistentState.isFilling else { return }
        persistentDidChange(index)
        let old = Set(oldValue.map(ObjectIdentifier.init)), new = Set(newValue.map(ObjectIdentifier.init))
        for member in newValue where !old.contains(ObjectIdentifier(member)) { joinContexts(with: member) }
        guard let entry = RelationshipResolver.entries(of: Self.self)[index], let inverse = entry.inverseKeyPath else { return }
        for removed in oldValue where !new.contains(ObjectIdentifier(removed)) {
            Self.unlink(self, from: removed, inverse: inverse, toMany: entry.inverseIsToMany)
        }
        for added in newValue where !old.contains(ObjectIdentifier(added)) {
            Self.link(self, to: added, inverse: inverse, toMany: entry.inverseIsToMany)
        }
    }

    func needsLoading(_ index: Int) -> Bool {
        persistentState.status == .registered && !persistentState.loadedRelationships.contains(index)
    }

    /// SwiftData's rule: relating an object to one that is not inserted inserts it; relating
    /// objects of two contexts is an error (thrown by the next save).
    func joinContexts<M: PersistentModel>(with other: M) {
        let mine = persistentState.context, theirs = other.persistentState.context
        if let mine, theirs == nil, other.persistentState.status == .transient {
            mine.insert(other)
        } else if let theirs, mine == nil, persistentState.status == .transient {
            theirs.insert(self)
        } else if let mine, let theirs, mine !== theirs {
            let error = StoreError(
                .misuse, "\(persistentModelID) and \(other.persistentModelID) belong to different ModelContexts and cannot be related; fetch one of them in the other's context with model(for:)",
                entity: Self.entityName)
            mine.pendingErrors.append(error)
        }
    }

    /// Makes `other`'s inverse include `self`.
    static func link<M: PersistentModel>(_ model: Self, to other: M, inverse: AnyKeyPath, toMany: Bool) {
        if toMany, let path = inverse as? ReferenceWritableKeyPath<M, [Self]> {
            let members = other[keyPath: path]
            if !members.contains(where: { $0 === model }) { other[keyPath: path] = members + [model] }
        } else if let path = inverse as? ReferenceWritableKeyPath<M, Self?> {
            if other[keyPath: path] !== model { other[keyPath: path] = model }
        }
    }

    /// Makes `other`'s inverse drop `self`.
    static func unlink<M: PersistentModel>(_ model: Self, from other: M, inverse: AnyKeyPath, toMany: Bool) {
        if toMany, let path = inverse as? ReferenceWritableKeyPath<M, [Self]> {
            let members = other[keyPath: path]
            if members.contains(where: { $0 === model }) { other[keyPath: path] = members.filter { $0 !== model } }
        } else if let path = inverse as? ReferenceWritableKeyPath<M, Self?> {
            if other[keyPath: path] === model { other[keyPath: path] = nil }
        }
    }
}

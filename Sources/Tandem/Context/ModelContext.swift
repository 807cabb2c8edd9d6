/// A scratch pad of model objects: insert, change and delete them, then ``save()``.
///
/// A context is not `Sendable`: use it on one actor or thread (see ``ModelActor`` for
/// background work). It keeps one object per record (an identity map), so fetching the same
/// record twice gives the same instance.
///
/// ```swift
/// let context = ModelContext(container)
/// let todo = Todo(code: "T-1", title: "Write docs", people: People(name: "Ann", age: 31))
/// context.insert(todo)          // nothing is stored yet
/// try context.save()            // one SQLite transaction
/// ```
public final class ModelContext {
    public let container: ModelContainer
    /// Recorded as the author of the history transactions this context saves.
    ///
    /// The sync engine saves what it pulls with the author `sync`, and never pushes it back.
    public var author: String?
    /// Recorded as the context of the history transactions this context saves.
    public var name: String?

    /// Identity map: every object this context handed out, by UUID.
    var registered: [UUID: WeakModel] = [:]
    /// Pending inserts, in insertion order (removed entries become nil).
    var inserted: [ObjectIdentifier: any PersistentModel] = [:]
    var insertionOrder: [ObjectIdentifier] = []
    var changed: [ObjectIdentifier: any PersistentModel] = [:]
    var deleted: [ObjectIdentifier: any PersistentModel] = [:]
    /// Misuse noticed by non-throwing calls (insert of a foreign object), thrown by save().
    var pendingErrors: [StoreError] = []
    /// Failures of lazy relationship loads (getters cannot throw), thrown once by the next save.
    var loadErrors: [StoreError] = []
    private var registrationsSinceSweep = 0

    public init(_ container: ModelContainer) {
        self.container = container
    }

    /// Whether there are unsaved inserts, changes or deletes.
    public var hasChanges: Bool {
        !inserted.isEmpty || !changed.isEmpty || !deleted.isEmpty
    }

    public var insertedModelsArray: [any PersistentModel] { insertionOrder.compactMap { inserted[$0] } }
    public var changedModelsArray: [any PersistentModel] { Array(changed.values) }
    public var deletedModelsArray: [any PersistentModel] { Array(deleted.values) }

    /// Registers a new object; it is stored by the next ``save()``.
    ///
    /// Inserting an object twice does nothing. Inserting an object that belongs to another
    /// context is an error thrown by the next `save()`.
    public func insert<T: PersistentModel>(_ model: T) {
        switch model.persistentState.status {
        case .inserted, .registered:
            if model.persistentState.context !== self {
                pendingErrors.append(
                    StoreError(.misuse, "\(model.persistentModelID) belongs to another ModelContext; fetch it in this context with model(for:) instead of inserting it", entity: T.entityName))
            }
            return
        case .deleted:
            if model.persistentState.context === self, deleted.removeValue(forKey: ObjectIdentifier(model)) != nil {
                model.persistentState.status = .registered  // undo a pending delete
                if !model.persistentState.changes.isEmpty { changed[ObjectIdentifier(model)] = model }
            }
            return
        case .transient:
            break
        }
        guard container.mappings[ObjectIdentifier(T.self)] != nil else {
            pendingErrors.append(StoreError(.misuse, "\(T.self) is not one of this container's models; pass it to ModelContainer(for:)", entity: T.entityName))
            return
        }
        let uuid = model.uuidAssigningIfNeeded
        model.persistentState.adopt(uuid: uuid, dataset: container.dataset, context: self, status: .inserted)
        let key = ObjectIdentifier(model)
        inserted[key] = model
        insertionOrder.append(key)
        register(model, uuid: uuid)
        insertRelated(of: model)
    }

    /// Inserts the objects `model` was related to before it was inserted (SwiftData inserts
    /// the whole graph).
    private func insertRelated<T: PersistentModel>(of model: T) {
        guard let mapping = container.mappings[ObjectIdentifier(T.self)] else { return }
        for (index, kind) in mapping.kinds.enumerated() {
            guard case .relationship = kind else { continue }
            let value = model[keyPath: mapping.properties[index].keyPath]
            if let many = value as? [any PersistentModel] {
                for member in many where member.persistentState.status == .transient { insert(member) }
            } else if let one = value as? any PersistentModel, one.persistentState.status == .transient {
                insert(one)
            }
        }
    }

    /// Deletes an object at the next ``save()``; deleting an unsaved insert just forgets it.
    public func delete<T: PersistentModel>(_ model: T) {
        guard model.persistentState.context === self else { return }
        let key = ObjectIdentifier(model)
        switch model.persistentState.status {
        case .inserted:
            inserted.removeValue(forKey: key)
            insertionOrder.removeAll { $0 == key }
            registered.removeValue(forKey: model.persistentState.uuid)
            model.persistentState.status = .transient
            model.persistentState.context = nil
        case .registered:
            changed.removeValue(forKey: key)
            deleted[key] = model
            model.persistentState.status = .deleted
        case .deleted, .transient:
            break
        }
    }

    /// Discards unsaved inserts, deletes and changes; changed objects get their saved values back.
    public func rollback() {
        for model in inserted.values {
            registered.removeValue(forKey: model.persistentState.uuid)
            model.persistentState.status = .transient
            model.persistentState.context = nil
            model.persistentState.changes.removeAll()
        }
        for model in deleted.values { model.persistentState.status = .registered }
        let toReload = Array(changed.values) + deleted.values.filter { !$0.persistentState.changes.isEmpty }
        inserted = [:]
        insertionOrder = []
        deleted = [:]
        changed = [:]
        pendingErrors = []
        loadErrors = []
        for model in toReload {
            model.persistentState.changes.removeAll()
            try? reload(model)
        }
    }

    /// The object with this identifier: registered in this context, or fetched from the store;
    /// `nil` when there is no such record (or it belongs to another dataset or entity).
    public func model(for id: PersistentIdentifier) -> (any PersistentModel)? {
        guard id.dataset == container.dataset, let mapping = container.mappingsByName[id.entityName] else { return nil }
        if let existing = registered[id.uuid]?.model { return existing.persistentState.status == .deleted ? nil : existing }
        return try? fetchOne(mapping.modelType, uuid: id.uuid)
    }

    /// The object with this identifier if this context already holds it, without fetching.
    public func registeredModel<T: PersistentModel>(for id: PersistentIdentifier) -> T? {
        registered[id.uuid]?.model as? T
    }

    func modelDidChange(_ model: some PersistentModel) {
        changed[ObjectIdentifier(model)] = model
    }

    /// Registers the objects a fetch created, growing the identity map once.
    func registerBatch<T: PersistentModel>(ids: [UUID], positions: [Int], in models: [T]) {
        guard !ids.isEmpty else { return }
        registered.reserveCapacity(registered.count + ids.count)
        for (uuid, position) in zip(ids, positions) { registered[uuid] = WeakModel(model: models[position]) }
        registrationsSinceSweep += ids.count
    }

    func register(_ model: any PersistentModel, uuid: UUID) {
        registered[uuid] = WeakModel(model: model)
        registrationsSinceSweep += 1
        if registrationsSinceSweep > max(1024, registered.count) {
            registered = registered.filter { $0.value.model != nil }
            registrationsSinceSweep = 0
        }
    }
}

/// A weak reference in the identity map: the context does not keep unchanged objects alive.
struct WeakModel {
    weak var model: (any PersistentModel)?
}

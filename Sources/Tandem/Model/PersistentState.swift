/// Identity and change-tracking state of a model object. `@Model` adds one to every class.
///
/// ```swift
/// public var persistentState = PersistentState()
/// ```
public struct PersistentState {
    /// Where the object stands with its context.
    public enum Status: Sendable, Hashable {
        /// Created, not inserted in any context.
        case transient
        /// Inserted, not saved yet.
        case inserted
        /// Saved or fetched: has a row.
        case registered
        /// Deleted (pending until save, then gone).
        case deleted
    }

    private var storedUUID: UUID?
    public internal(set) var dataset: String?
    public internal(set) var status: Status = .transient { didSet { retainContext() } }
    /// The context the object belongs to. A saved or fetched object without unsaved changes
    /// keeps it alive, so its relationships load for as long as the object lives
    /// (`ModelContext(container).fetch(d).first?.articles`): the context holds such objects
    /// weakly, so that makes no cycle. Inserted, changed and deleted objects, which the
    /// context holds strongly until save, refer to it weakly.
    var context: ModelContext? {
        get { strongContext ?? weakContext }
        set {
            weakContext = newValue
            strongContext = nil
            retainContext()
        }
    }
    private weak var weakContext: ModelContext?
    private var strongContext: ModelContext?
    /// The persisted properties set since the last save or fetch.
    var changes = ChangeSet() { didSet { retainContext() } }

    private mutating func retainContext() {
        strongContext = status == .registered && changes.isEmpty ? strongContext ?? weakContext : nil
    }
    /// The destination UUID of each to-one relationship, by property index, as stored or set
    /// (`nil` until a model has one, so plain models copy no reference).
    var storedForeignKeys: [Int: UUID]?

    var foreignKeys: [Int: UUID] {
        get { storedForeignKeys ?? [:] }
        set { storedForeignKeys = newValue.isEmpty ? nil : newValue }
    }
    /// Relationships whose storage is loaded (authoritative) on a registered object.
    var loadedRelationships = ChangeSet()
    /// Set while the store fills relationship storage, so setters do not track changes.
    var isFilling = false

    public init() {}

    /// The record's UUID: its primary key on every replica.
    public var uuid: UUID {
        mutating get {
            if let storedUUID { return storedUUID }
            let fresh = RandomUUID.next()
            storedUUID = fresh
            return fresh
        }
    }

    var assignedUUID: UUID? { storedUUID }

    mutating func adopt(uuid: UUID, dataset: String, context: ModelContext, status: Status) {
        storedUUID = uuid
        self.dataset = dataset
        self.context = context
        self.status = status
    }

    /// Marks `index` changed; returns `true` when the object just became dirty.
    mutating func markChanged(_ index: Int) -> Bool {
        let wasClean = changes.isEmpty
        changes.insert(index)
        return wasClean
    }
}

extension PersistentModel {
    // `persistentState.uuid` mutates on first use; models are reference types, so a getter
    // on the object can do it.
    var uuidAssigningIfNeeded: UUID {
        persistentState.uuid
    }
}

/// A set of attribute indexes, allocation-free below 64 attributes.
struct ChangeSet: Hashable, Sendable {
    private var low: UInt64 = 0
    /// Indexes from 64 on; `nil` (no reference to copy) for nearly every model.
    private var high: Set<Int>?

    var isEmpty: Bool { low == 0 && (high?.isEmpty ?? true) }

    mutating func insert(_ index: Int) {
        if index < 64 { low |= 1 << UInt64(index) } else { high = (high ?? []).union([index]) }
    }

    func contains(_ index: Int) -> Bool {
        index < 64 ? low & (1 << UInt64(index)) != 0 : high?.contains(index) ?? false
    }

    mutating func removeAll() {
        low = 0
        high = nil
    }
}

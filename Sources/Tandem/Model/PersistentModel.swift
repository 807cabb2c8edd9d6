/// A class whose instances Tandem stores: what `@Model` implements.
///
/// Write `@Model` on a `final class`; conforming by hand is possible (the generated code is
/// ordinary Swift): list the persisted properties in ``schemaMetadata``, decode them in
/// ``init(persistentRow:)`` and encode them in ``encodePersistentValues(to:)`` in that order,
/// and call ``persistentDidChange(_:)`` with a property's index whenever it is set.
///
/// ```swift
/// @Model final class Note {
///     var title: String
///     init(title: String) { self.title = title }
/// }
/// let id = note.persistentModelID          // stable: tandem://<dataset>/Note/<uuid>
/// ```
public protocol PersistentModel: AnyObject, Observable, Identifiable, Hashable {
    /// The persisted properties, in storage order.
    static var schemaMetadata: [PropertyMetadata] { get }
    /// Identity and change-tracking state, owned by the store.
    var persistentState: PersistentState { get set }
    /// Creates an instance from a fetched row.
    init(persistentRow row: PersistentRow) throws
    /// Writes every persisted property to `row`, by index.
    func encodePersistentValues(to row: inout PersistentRowWriter) throws
    /// Replaces every persisted property with the row's values (another context saved them).
    func refreshPersistentValues(from row: PersistentRow) throws
    /// The model's first name when the class was renamed (`@Model(originalName: "Task")`
    /// generates it), else `nil` (the default): its ``entityName``.
    ///
    /// ```swift
    /// @Model(originalName: "Task") final class Todo { var title = "" }
    /// Todo.originalEntityName   // "Task"
    /// ```
    static var originalEntityName: String? { get }
}

extension PersistentModel {
    /// The name the records are stored and synced under: the model's first name
    /// (``originalEntityName``), else the class's unqualified name, so `V1.Note` and
    /// `V2.Note` share a table, and `Todo` declared `@Model(originalName: "Task")` keeps the
    /// table, the journal entries and the record URIs (`tandem://ds/Task/…`) of `Task`.
    public static var entityName: String {
        originalEntityName ?? String(describing: Self.self)
    }

    /// `nil`: a model that was never renamed is stored under its class name.
    public static var originalEntityName: String? { nil }

    /// The record's stable identity.
    ///
    /// Assigned when the object is created; its dataset is the container's once the object is
    /// inserted (before that, the URI reads `tandem://_/Entity/uuid`).
    public var persistentModelID: PersistentIdentifier {
        PersistentIdentifier(
            dataset: persistentState.dataset ?? PersistentIdentifier.unassignedDataset,
            entityName: Self.entityName, uuid: persistentState.uuid)
    }

    public var id: PersistentIdentifier { persistentModelID }

    /// The context the object is registered in, if any.
    public var modelContext: ModelContext? { persistentState.context }

    /// Whether the object was deleted from its context (pending or saved).
    public var isDeleted: Bool { persistentState.status == .deleted }

    /// Whether the object has unsaved changes to its properties.
    public var hasChanges: Bool { !persistentState.changes.isEmpty || persistentState.status == .inserted }

    /// Records that the persisted property at `index` was set. Generated setters call it.
    public func persistentDidChange(_ index: Int) {
        if persistentState.markChanged(index), persistentState.status == .registered {
            persistentState.context?.modelDidChange(self)
        }
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

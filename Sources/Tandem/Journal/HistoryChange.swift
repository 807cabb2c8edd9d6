/// One record change in a history transaction.
///
/// `values` maps column names (see the storage mapping: `title`, `people.age`, a to-one
/// relationship's name for its foreign key) to new values:
/// - `.insert`: every column;
/// - `.update`: only the columns that changed;
/// - `.delete`: the tombstone — the record's `.unique` attributes and those marked
///   `@Attribute(.preserveValueOnDeletion)`;
/// - `.link` / `.unlink`: a many-to-many relationship gained or lost a member; `values` maps
///   the relationship's name to the member's UUID (as text).
///
/// ```swift
/// for change in transaction.changes where change.kind == .update {
///     print(change.persistentModelID, change.values, change.stamps)
/// }
/// ```
public struct HistoryChange: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Hashable, Codable {
        case insert, update, delete, link, unlink
    }

    /// The change's position in the journal (increasing in commit order).
    public var id: Int64
    public var kind: Kind
    public var entityName: String
    /// The record's stable identity (`tandem://<dataset>/<Entity>/<uuid>`).
    public var persistentModelID: PersistentIdentifier
    /// The changed columns with their new values (see the type's documentation).
    public var values: [String: HistoryValue]
    /// The HLC stamp of each column in ``values``.
    public var stamps: [String: HLCTimestamp]
    /// The stamp of the change as a whole, when all its columns share one.
    var defaultStamp: HLCTimestamp?

    init(
        id: Int64, kind: Kind, entityName: String, persistentModelID: PersistentIdentifier,
        values: [String: HistoryValue], stamps: [String: HLCTimestamp], defaultStamp: HLCTimestamp?
    ) {
        self.id = id
        self.kind = kind
        self.entityName = entityName
        self.persistentModelID = persistentModelID
        self.values = values
        self.stamps = stamps
        self.defaultStamp = defaultStamp
    }

    /// The deleted record's preserved values (`nil` unless ``kind`` is `.delete`).
    public var tombstone: [String: HistoryValue]? { kind == .delete ? values : nil }

    /// The HLC stamp of one column's value in this change (the transaction's stamp when the
    /// change carries no stamp of its own for it).
    ///
    /// ```swift
    /// let stamp = change.stamp(of: "title")
    /// ```
    public func stamp(of column: String) -> HLCTimestamp {
        stamps[column] ?? defaultStamp ?? .zero
    }

    /// The latest stamp of the change: when it happened, in HLC order.
    public var stamp: HLCTimestamp {
        stamps.values.max() ?? defaultStamp ?? .zero
    }
}

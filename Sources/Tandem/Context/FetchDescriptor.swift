/// What to fetch: a predicate, a sort order, a page — all run in SQLite.
///
/// ```swift
/// var d = FetchDescriptor<Todo>(predicate: #Predicate { $0.people.age >= 18 && $0.priority == .high },
///                               sortBy: [SortDescriptor(\.title)])
/// d.fetchLimit = 20
/// let page = try context.fetch(d)
/// let flagged = try context.fetch(FetchDescriptor<Todo>(sqlFilter: "(optionBits & ?) = ?", arguments: [mask, mask]))
/// ```
public struct FetchDescriptor<T: PersistentModel> {
    /// Compiled to a SQL `WHERE` clause; a construct that cannot be compiled throws
    /// ``StoreError/Code/unsupportedPredicate`` — never a silent fetch-everything.
    public var predicate: Predicate<T>?
    public var sortBy: [SortDescriptor<T>]
    public var fetchLimit: Int?
    public var fetchOffset: Int?
    /// Whether unsaved inserts, changes and deletes of the context are taken into account
    /// (predicates are then evaluated in memory for those objects). Default `true`.
    public var includePendingChanges = true
    /// Relationships to load for every fetched object in one query each, instead of one query
    /// per object on first access.
    public var relationshipKeyPathsForPrefetching: [PartialKeyPath<T>] = []
    /// A raw SQL condition (columns as named in the table), combined with `predicate` by AND.
    /// Pending changes other than deletes are not visible to it.
    public var sqlFilter: String?
    /// The positional arguments of ``sqlFilter``, converted as Tandem stores values (dates as
    /// seconds since 1970, UUIDs as lowercase text, enums by raw value).
    public var sqlArguments: [any DatabaseValueConvertible]

    public init(predicate: Predicate<T>? = nil, sortBy: [SortDescriptor<T>] = []) {
        self.predicate = predicate
        self.sortBy = sortBy
        self.sqlArguments = []
    }

    /// A fetch filtered by raw SQL: the escape hatch for conditions `#Predicate` cannot
    /// express, such as bit masks.
    public init(
        predicate: Predicate<T>? = nil, sqlFilter: String, arguments: [any DatabaseValueConvertible] = [],
        sortBy: [SortDescriptor<T>] = []
    ) {
        self.predicate = predicate
        self.sortBy = sortBy
        self.sqlFilter = sqlFilter
        self.sqlArguments = arguments
    }
}

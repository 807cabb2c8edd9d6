/// Which history to fetch: transactions after a token, optionally only some authors or
/// entities.
///
/// ```swift
/// var descriptor = HistoryDescriptor(after: lastToken)
/// descriptor.excludedAuthors = ["sync"]     // what this replica wrote itself
/// descriptor.entityNames = ["Todo"]
/// descriptor.fetchLimit = 100               // transactions
/// let transactions = try context.fetchHistory(descriptor)
/// ```
///
/// A huge transaction (a bulk import) can be read in slices of its changes:
///
/// ```swift
/// var slice = HistoryDescriptor(after: acknowledged)
/// slice.afterChange = lastChangeRead        // a HistoryChange.id
/// slice.changeLimit = 10_000                // the last transaction may be cut short
/// ```
public struct HistoryDescriptor: Sendable, Hashable {
    /// Only transactions with a larger token (`nil`: from the start).
    public var after: HistoryToken?
    /// Only transactions by these authors.
    public var authors: Set<String>?
    /// No transactions by these authors (transactions without an author are kept).
    public var excludedAuthors: Set<String>?
    /// Only changes to these entities (many-to-many links count as their source entity's);
    /// transactions left without changes are skipped.
    public var entityNames: Set<String>?
    /// At most this many transactions.
    public var fetchLimit: Int?
    /// Only changes with a larger ``HistoryChange/id`` (the rest of a transaction read in
    /// part before); transactions left without changes are skipped.
    public var afterChange: Int64?
    /// At most this many changes in all: the last transaction returned holds only the
    /// changes up to the limit when it has more. With ``entityNames``, every change read
    /// counts, matching or not, so an empty answer does not mean the end of the history.
    public var changeLimit: Int?

    public init(after: HistoryToken? = nil) {
        self.after = after
    }
}

/// One committed write transaction in the change journal, with its record changes.
///
/// ```swift
/// for transaction in try context.fetchHistory(HistoryDescriptor(after: lastToken)) {
///     print(transaction.token, transaction.author ?? "-", transaction.changes.count)
///     lastToken = transaction.token
/// }
/// ```
public struct HistoryTransaction: Sendable, Hashable, Codable {
    public var token: HistoryToken
    /// The writing context's ``ModelContext/author`` (or the `author:` of a raw write).
    public var author: String?
    /// The writer's wall-clock time at commit.
    public var timestamp: Date
    /// The HLC stamp of the transaction (its local changes carry it).
    public var stamp: HLCTimestamp
    /// The writing context's ``ModelContext/name``.
    public var contextName: String?
    /// The writing process, as `name[pid]`.
    public var processName: String
    /// The record changes, in the order they were made.
    public var changes: [HistoryChange]
}

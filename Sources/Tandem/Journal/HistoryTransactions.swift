/// An `AsyncSequence` of committed history transactions, from this process or others; see
/// ``ModelContainer/historyTransactions(after:)``.
///
/// Each iterator polls the journal (one primary-key range query, empty when nothing
/// changed) and yields new transactions in token order, each exactly once.
public struct HistoryTransactions: AsyncSequence, Sendable {
    public typealias Element = HistoryTransaction

    let container: ModelContainer
    let after: HistoryToken?
    let interval: Duration

    public func makeAsyncIterator() -> Iterator {
        Iterator(container: container, after: after, interval: interval)
    }

    public struct Iterator: AsyncIteratorProtocol {
        let container: ModelContainer
        var last: HistoryToken?
        let interval: Duration
        var buffer: [HistoryTransaction] = []

        init(container: ModelContainer, after: HistoryToken?, interval: Duration) {
            self.container = container
            self.last = after
            self.interval = interval
        }

        /// The next transaction; `nil` when the task is cancelled. Read errors end the
        /// sequence too (use ``ModelContainer/fetchHistory(_:)`` to see them).
        public mutating func next() async -> HistoryTransaction? {
            while buffer.isEmpty {
                if Task.isCancelled { return nil }
                do {
                    if last == nil { last = try container.currentHistoryToken() }
                    var descriptor = HistoryDescriptor(after: last)
                    descriptor.fetchLimit = 64
                    buffer = try container.fetchHistory(descriptor)
                } catch {
                    return nil
                }
                if buffer.isEmpty {
                    do { try await Task.sleep(for: interval) } catch { return nil }
                }
            }
            let transaction = buffer.removeFirst()
            last = transaction.token
            return transaction
        }
    }
}

/// A registered consumer of the change journal (the sync engine, an exporter) and the last
/// token it acknowledged. History it has not acknowledged is kept by
/// ``ModelContext/deleteHistory(before:)``.
///
/// ```swift
/// try container.registerHistoryReader("exporter")
/// // … process transactions …
/// try container.acknowledgeHistory(through: transaction.token, reader: "exporter")
/// ```
public struct HistoryReader: Sendable, Hashable, Codable {
    public var name: String
    public var acknowledged: HistoryToken
}

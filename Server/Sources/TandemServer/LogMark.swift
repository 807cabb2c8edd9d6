/// A dataset's log head at one time: entries at or before `position` were logged at or
/// before `at` (ms since 1970). The maintenance service notes one per dataset whose log grew
/// each round, so that a time limit finds its horizon without a time on every entry.
///
/// ```swift
/// try await storage.addLogMark(dataset: id, position: head, at: now)
/// ```
public struct LogMark: Sendable, Hashable {
    public var position: Int64
    public var at: Int64

    public init(position: Int64, at: Int64) {
        self.position = position
        self.at = at
    }
}

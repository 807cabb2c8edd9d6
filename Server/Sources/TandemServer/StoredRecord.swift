public import TandemConflicts
public import TandemSchema

/// A record as the server keeps it: its URI and merged state (a snapshot page holds these).
///
/// ```swift
/// let (records, hasMore) = try await storage.records(dataset: id, after: "", limit: 1000)
/// ```
public struct StoredRecord: Sendable, Hashable {
    public var uri: String
    public var state: RecordState
    /// For a record merged into another (both held one unique value): the survivor and the
    /// stamp of the merge's delete (``MergedRecord``).
    public var merged: (survivor: String, stamp: HLCTimestamp)?

    public init(uri: String, state: RecordState, merged: (survivor: String, stamp: HLCTimestamp)? = nil) {
        self.uri = uri
        self.state = state
        self.merged = merged
    }

    public static func == (a: StoredRecord, b: StoredRecord) -> Bool {
        a.uri == b.uri && a.state == b.state && a.merged?.survivor == b.merged?.survivor && a.merged?.stamp == b.merged?.stamp
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(uri)
        hasher.combine(state)
    }
}

/// One dataset as the operator's dashboard shows it (``ServerStorage/datasetOverviews()``).
///
/// ```swift
/// for dataset in try await storage.datasetOverviews() { print(dataset.owner, dataset.name, dataset.records) }
/// ```
public struct DatasetOverview: Sendable, Hashable {
    public var id: Int64
    public var owner: String
    public var name: String
    public var createdAt: Int64
    /// The bytes its log, lost values and schema versions hold (what the owner's quota counts).
    public var storedBytes: Int64
    /// Records, deleted ones whose tombstones are kept included.
    public var records: Int
    /// The position of its last log entry.
    public var logHead: Int64
    /// How far compaction folded its log into the records.
    public var compactedThrough: Int64
    public var schemaVersions: Int
    public var members: Int

    public init(
        id: Int64, owner: String, name: String, createdAt: Int64, storedBytes: Int64, records: Int, logHead: Int64, compactedThrough: Int64,
        schemaVersions: Int, members: Int
    ) {
        self.id = id
        self.owner = owner
        self.name = name
        self.createdAt = createdAt
        self.storedBytes = storedBytes
        self.records = records
        self.logHead = logHead
        self.compactedThrough = compactedThrough
        self.schemaVersions = schemaVersions
        self.members = members
    }
}

/// The limits an operator set for one user (`tandem-server users quota NAME …`); a `nil`
/// limit is the server's default (`tandem-server serve --max-datasets-per-user`,
/// `--max-schema-versions`, `--max-bytes-per-user`).
///
/// ```swift
/// try await storage.setQuota(user: alice.id, UserQuota(datasets: 5, bytes: 1 << 30))
/// let limit = alice.quota.limits(configuration).bytes
/// ```
public struct UserQuota: Sendable, Hashable, Codable {
    /// Datasets the user may create.
    public var datasets: Int?
    /// Schema versions each of the user's datasets may register.
    public var schemaVersions: Int?
    /// Bytes of changes the user's datasets may hold in their logs: past them, pushes are
    /// refused (403 `quota_exceeded`) and the client keeps its changes pending.
    public var bytes: Int64?

    public init(datasets: Int? = nil, schemaVersions: Int? = nil, bytes: Int64? = nil) {
        self.datasets = datasets
        self.schemaVersions = schemaVersions
        self.bytes = bytes
    }

    /// The limits in force: this user's where set, else the server's.
    public func limits(_ configuration: ServerConfiguration) -> (datasets: Int, schemaVersions: Int, bytes: Int64) {
        (
            datasets ?? configuration.maxDatasetsPerUser, schemaVersions ?? configuration.maxSchemaVersions,
            bytes ?? configuration.maxBytesPerUser
        )
    }
}

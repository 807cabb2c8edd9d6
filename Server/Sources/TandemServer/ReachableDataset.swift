public import TandemWire

/// A dataset a user reaches, owned or shared with them, as `GET /v1/datasets` lists it.
///
/// ```swift
/// for reachable in try await storage.datasets(reachableBy: bob.id) { print(reachable.info.owner ?? "", reachable.info.name) }
/// ```
public struct ReachableDataset: Sendable, Hashable {
    public var id: Int64
    /// With ``DatasetInfo/owner`` and ``DatasetInfo/role`` set.
    public var info: DatasetInfo

    public init(id: Int64, info: DatasetInfo) {
        self.id = id
        self.info = info
    }
}

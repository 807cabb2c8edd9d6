/// `GET /v1/datasets/{dataset}/lag?after=CURSOR` (feature `client-activity`): how far a
/// cursor is behind the dataset's log head, as the server counts it (the dashboard counts a
/// client's lag the same way, from the cursor of its last pull).
///
/// ```json
/// {"behind": 12, "head": "c1.MTo1NA", "serverTime": 1764300000000}
/// ```
public struct DatasetLag: Sendable, Hashable, Codable {
    /// Log entries after the cursor (0: it is at the head).
    public var behind: Int64
    /// The cursor of the log's last entry.
    public var head: String
    public var serverTime: Int64

    public init(behind: Int64, head: String, serverTime: Int64) {
        self.behind = behind
        self.head = head
        self.serverTime = serverTime
    }
}

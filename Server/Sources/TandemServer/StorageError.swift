/// A storage failure the handlers turn into a 4xx (``conflict``, ``notFound``) or a 503.
public enum StorageError: Error, Sendable, CustomStringConvertible {
    case conflict(String)
    case notFound(String)
    /// A quota of the user's is used up (403 `quota_exceeded`).
    case quota(String)
    /// The database cannot be used (unreadable file, disk full…).
    case unavailable(String)

    /// A user with `limit` datasets asked for one more.
    public static func datasetQuota(_ limit: Int) -> StorageError {
        .quota(
            "this user has \(limit) datasets or more, the most this server allows them (the operator sets it with tandem-server users quota NAME --datasets N, or serve --max-datasets-per-user)"
        )
    }

    /// A push to a dataset whose owner stores `stored` bytes, `limit` at most.
    public static func byteQuota(stored: Int64, limit: Int64) -> StorageError {
        .quota(
            "the datasets of this dataset's owner hold \(stored) bytes, the most this server allows them (\(limit)); the changes stay pending on the client until the operator raises the owner's quota (tandem-server users quota OWNER --bytes N, or serve --max-bytes-per-user)"
        )
    }

    public var description: String {
        switch self {
        case .conflict(let message), .notFound(let message), .quota(let message), .unavailable(let message): message
        }
    }
}

extension APIError {
    /// The answer to a storage error: 409 `conflict`, 404, 403 `quota_exceeded`, or 503
    /// `unavailable` (the error middleware's, and the push route's for the dashboard).
    init(_ error: StorageError) {
        switch error {
        case .conflict(let message): self.init(.conflict, "conflict", message)
        case .notFound(let message): self = .notFound(message)
        case .quota(let message): self.init(.forbidden, "quota_exceeded", message)
        case .unavailable: self.init(.serviceUnavailable, "unavailable", "the server's database is unavailable; retry later")
        }
    }
}

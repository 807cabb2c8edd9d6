/// A storage failure the handlers turn into a 4xx (``conflict``, ``notFound``) or a 503.
public enum StorageError: Error, Sendable, CustomStringConvertible {
    case conflict(String)
    case notFound(String)
    /// A quota of the user's is used up (403 `quota_exceeded`).
    case quota(String)
    /// The database cannot be used (unreadable file, disk full…).
    case unavailable(String)

    public var description: String {
        switch self {
        case .conflict(let message), .notFound(let message), .quota(let message), .unavailable(let message): message
        }
    }
}

/// Why a sync did not finish. One error type for the engine and its transports, with an
/// extensible code and a message that says what to do.
///
/// ```swift
/// do { try await engine.sync() } catch let error as SyncError where error.code == .schemaIncompatible {
///     print(error.message)   // names the breaking rules
/// }
/// ```
public struct SyncError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// No answer from the server (refused, timed out, cut). Retrying later may work.
        public static let unreachable = Code(rawValue: "unreachable")
        /// The token was refused (401/403).
        public static let unauthorized = Code(rawValue: "unauthorized")
        /// A quota of the user's on the server is used up (403 `quota_exceeded`): datasets,
        /// schema versions or stored bytes. Local changes stay pending; the sync succeeds
        /// once the server's operator raises the quota (`tandem-server users quota`).
        public static let quotaExceeded = Code(rawValue: "quotaExceeded")
        /// The store's schema breaks sync with a version the dataset has; the message names
        /// the rules.
        public static let schemaIncompatible = Code(rawValue: "schemaIncompatible")
        /// The server refused a request as invalid (4xx): a bug or a version mismatch.
        public static let rejected = Code(rawValue: "rejected")
        /// The server failed (5xx) or is rate limiting (429). Retrying later may work.
        public static let serverUnavailable = Code(rawValue: "serverUnavailable")
        /// The server speaks another version of the sync protocol than this Tandem.
        public static let unsupportedProtocol = Code(rawValue: "unsupportedProtocol")
        /// The server's answer could not be read.
        public static let invalidResponse = Code(rawValue: "invalidResponse")
        /// The local store failed.
        public static let store = Code(rawValue: "store")
        /// The configuration is unusable (bad URL, missing token).
        public static let misconfigured = Code(rawValue: "misconfigured")
        /// The server refused stamps made ahead of its clock (`clock_skew`). The engine
        /// stamps them again below the server's limit and pushes again by itself; this is
        /// thrown only when that did not help.
        public static let clockSkew = Code(rawValue: "clockSkew")
        /// Local changes the server refused are waiting in the quarantine: the sync moved
        /// everything else, but the store is not fully on the server (`tandem quarantine list`).
        public static let unsynced = Code(rawValue: "unsynced")
    }

    public var code: Code
    public var message: String
    /// The HTTP status, when the server answered.
    public var status: Int?
    /// Seconds to wait before retrying, when the server said so (`Retry-After`).
    public var retryAfter: Double?
    /// The server's own error code (`invalid_stamp`), when its answer had one.
    public var serverCode: String?
    /// For ``Code/clockSkew``: the server's clock and how far ahead of it a stamp may be (ms).
    public var serverTime: Int64?
    public var maxClockSkew: Int64?

    public init(_ code: Code, _ message: String, status: Int? = nil, retryAfter: Double? = nil, serverCode: String? = nil) {
        self.code = code
        self.message = message
        self.status = status
        self.retryAfter = retryAfter
        self.serverCode = serverCode
    }

    /// Whether retrying the same sync later can succeed without anyone changing anything.
    public var isTransient: Bool {
        code == .unreachable || code == .serverUnavailable
    }

    /// Whether the server said the store's cursor is not of its data's history (restored
    /// from a backup or copied since: `cursor_epoch`, `cursor_ahead`; the dataset deleted and
    /// made again since: `cursor_dataset_deleted`): the engine resyncs. A cursor of another
    /// dataset (`cursor_other_dataset`) stops the sync: the store is another's replica.
    var needsResync: Bool {
        serverCode == "cursor_epoch" || serverCode == "cursor_ahead" || serverCode == "cursor_dataset_deleted"
    }

    public var description: String { "\(code): \(message)" }
}

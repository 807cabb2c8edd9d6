/// `GET /v1/capabilities`: the protocol version a server speaks, its limits, and the
/// additions to protocol v1 it has. A client reads it once, in its handshake, and cuts its
/// pushes and pages to the limits instead of learning them from refusals.
///
/// Protocol v1 grows additively: a later endpoint, optional member, change kind or answer is
/// named in ``features`` by the server that has it, and a client uses it only then.
///
/// ```swift
/// let capabilities = try JSONDecoder().decode(ServerCapabilities.self, from: body)
/// let batch = min(2_500, capabilities.maxChangesPerPush)
/// ```
public struct ServerCapabilities: Sendable, Hashable, Codable {
    /// The wire protocol (the `/v1/` of every path): ``WireProtocol/version``.
    public var protocolVersion: Int
    /// The most changes one push may hold (more: 413 `batch_too_large`).
    public var maxChangesPerPush: Int
    /// The most changes one pull page holds (a larger `limit` is cut to it).
    public var maxPageSize: Int
    /// The most bytes of a request body, inflated (more: 413 `body_too_large`).
    public var maxBodyBytes: Int
    /// How far ahead of the server's clock a stamp may be (more: refused as `clock_skew`).
    public var maxClockSkewMilliseconds: Int64
    /// Additions to protocol v1 this server has, by name; empty for v1 as first settled.
    public var features: [String]
    /// The longest `wait` a pull may ask for, in seconds (feature `pullWait`: a pull with
    /// `wait` answers when a change arrives or the wait ends); `nil` without the feature.
    public var maxPullWaitSeconds: Int?

    public init(
        protocolVersion: Int = WireProtocol.version, maxChangesPerPush: Int, maxPageSize: Int, maxBodyBytes: Int,
        maxClockSkewMilliseconds: Int64, features: [String] = [], maxPullWaitSeconds: Int? = nil
    ) {
        self.protocolVersion = protocolVersion
        self.maxChangesPerPush = maxChangesPerPush
        self.maxPageSize = maxPageSize
        self.maxBodyBytes = maxBodyBytes
        self.maxClockSkewMilliseconds = maxClockSkewMilliseconds
        self.features = features
        self.maxPullWaitSeconds = maxPullWaitSeconds
    }
}

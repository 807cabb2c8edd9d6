public import Hummingbird
public import NIOCore

/// The request context of the server's routes: Hummingbird's core storage plus the user the
/// bearer token authenticated.
public struct TandemRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Set by ``Authenticator`` on every `/v1` route.
    public var user: ServerUser?
    /// The id of the token that authenticated the request (a waiting pull checks it is still
    /// live before it answers with what arrived meanwhile).
    public var tokenID: String?
    /// What the request's token may reach (``Authenticator`` sets it; unlimited until then).
    public var scope: TokenScope = .unlimited
    /// Who the client says it is (`Tandem-Client`, `Tandem-Pending`), checked and set by
    /// ``ClientHeadersMiddleware`` on every `/v1` route; `nil` when it does not say.
    public var client: ClientHeaders?
    /// Completed when the client's connection closes: long work for it stops then.
    public let connectionClosed: EventLoopFuture<Void>
    /// The client's connection (``ConnectionGuard`` reports its close to waiting pulls).
    public let connection: ObjectIdentifier

    public init(source: Source) {
        self.coreContext = .init(source: source)
        self.connectionClosed = source.channel.closeFuture
        self.connection = ObjectIdentifier(source.channel)
    }

    /// The authenticated user (``Authenticator`` guarantees one on `/v1` routes).
    func requireUser() throws -> ServerUser {
        guard let user else { throw APIError.unauthorized("missing bearer token") }
        return user
    }
}

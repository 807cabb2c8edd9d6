public import Hummingbird

/// The request context of the server's routes: Hummingbird's core storage plus the user the
/// bearer token authenticated.
public struct TandemRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Set by ``Authenticator`` on every `/v1` route.
    public var user: ServerUser?

    public init(source: Source) {
        self.coreContext = .init(source: source)
    }

    /// The authenticated user (``Authenticator`` guarantees one on `/v1` routes).
    func requireUser() throws -> ServerUser {
        guard let user else { throw APIError.unauthorized("missing bearer token") }
        return user
    }
}

public import Hummingbird
import HummingbirdCore
import NIOCore
public import Logging
public import Foundation
import TandemSchema
import TandemWire

/// Everything the server's routes need.
public struct ServerDependencies: Sendable {
    public var storage: any ServerStorage
    public var configuration: ServerConfiguration
    /// The server's clock, milliseconds since 1970 (injected for tests).
    public var now: @Sendable () -> Int64
    /// The counters and timers `GET /metrics` serves.
    public var metrics: ServerMetrics
    /// The app's own sign-in, when the server accepts it (`serve --jwks`).
    public var jwt: JWTVerifier?
    /// Where schema compatibility checks wait their turn: one at a time, one per user.
    var schemaChecks = WorkLimiter(width: 1)
    /// The clients seen, conflicts, refusals and rates the dashboard shows (this node's).
    public var activity: ClientActivity

    public init(
        storage: any ServerStorage, configuration: ServerConfiguration = ServerConfiguration(),
        metrics: ServerMetrics = ServerMetrics(), jwt: JWTVerifier? = nil,
        now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }
    ) {
        self.storage = storage
        self.configuration = configuration
        self.metrics = metrics
        self.jwt = jwt
        self.now = now
        activity = ClientActivity(now: now)
    }
}

/// Builds the server: routes, authentication, limits. `tandem-server serve` runs it; tests
/// drive the same application with HummingbirdTesting.
///
/// ```swift
/// let app = buildApplication(ServerDependencies(storage: try SQLiteServerStorage(path: "tandem.sqlite")),
///                            host: "127.0.0.1", port: 8080, logger: Logger(label: "tandem-server"))
/// try await app.runService()
/// ```
public func buildApplication(
    _ dependencies: ServerDependencies, host: String = "127.0.0.1", port: Int = 8080,
    logger: Logger
) -> some ApplicationProtocol {
    let limits = dependencies.configuration
    let connections = ConnectionGuard.Counter()
    let http = HTTP1Channel.Configuration(
        additionalChannelHandlers: [
            ConnectionGuard(
                counter: connections, maxConnections: limits.maxConnections, headerTimeout: TimeAmount(limits.headerTimeout),
                bodyTimeout: TimeAmount(limits.bodyTimeout), signals: dependencies.storage.logSignals)
        ],
        idleTimeout: TimeAmount(limits.idleTimeout))
    return Application(
        router: buildRouter(dependencies),
        server: .http1(configuration: http),
        configuration: .init(address: .hostname(host, port: port), serverName: "tandem-server"),
        services: [MaintenanceService(dependencies: dependencies, logger: logger)],
        logger: logger)
}

/// The router alone (what router tests drive).
public func buildRouter(_ dependencies: ServerDependencies) -> Router<TandemRequestContext> {
    let router = Router(context: TandemRequestContext.self)
    // Outermost: the others see errors as thrown (metrics count their codes); it turns them
    // into answers only to put its header on them.
    router.add(middleware: ServerTimeMiddleware(now: dependencies.now))
    router.add(middleware: LogRequestsMiddleware(.info))
    router.add(middleware: ResponseMetricsMiddleware(metrics: dependencies.metrics, activity: dependencies.activity))
    router.add(middleware: MetricsMiddleware())
    router.add(middleware: CompressionMiddleware())
    router.add(middleware: ErrorMiddleware())
    let routes = Routes(dependencies: dependencies)
    router.get("health") { _, _ in try await routes.health() }
    let registry = dependencies.metrics.registry
    router.get("metrics") { _, _ in
        Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
    }
    let specification = OpenAPIDocument.text
    router.get("openapi.yaml") { _, _ in
        Response(
            status: .ok, headers: [.contentType: "application/yaml; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: specification)))
    }
    let authenticator = Authenticator(
        storage: dependencies.storage,
        limiter: RateLimiter(rate: dependencies.configuration.requestsPerSecond, burst: dependencies.configuration.burst),
        now: dependencies.now, jwt: dependencies.jwt)
    AdminRoutes(dependencies: dependencies, authenticator: authenticator).register(on: router)
    // Tandem-Client and Tandem-Pending are checked on every /v1 request (400 invalid_client).
    let v1 = router.group("v1").add(middleware: authenticator).add(middleware: ClientHeadersMiddleware())
    v1.get("capabilities") { _, _ in try routes.capabilities() }
    v1.get("datasets") { _, context in try await routes.listDatasets(context) }
    v1.put("datasets/:dataset") { _, context in try await routes.createDataset(context) }
    v1.get("datasets/:dataset/schema") { _, context in try await routes.schemaHistory(context) }
    v1.put("datasets/:dataset/schema") { request, context in try await routes.registerSchema(request, context) }
    v1.post("datasets/:dataset/push") { request, context in try await routes.push(request, context) }
    v1.get("datasets/:dataset/pull") { request, context in try await routes.pull(request, context) }
    v1.get("datasets/:dataset/snapshot") { request, context in try await routes.snapshot(request, context) }
    v1.get("datasets/:dataset/lag") { request, context in try await routes.lag(request, context) }
    v1.get("datasets/:dataset/members") { _, context in try await routes.members(context) }
    v1.put("datasets/:dataset/members/:user") { request, context in try await routes.setMember(request, context) }
    v1.delete("datasets/:dataset") { _, context in try await routes.deleteDataset(context) }
    v1.delete("datasets/:dataset/members/:user") { _, context in try await routes.removeMember(context) }
    return router
}

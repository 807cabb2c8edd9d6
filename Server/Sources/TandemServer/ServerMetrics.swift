public import Prometheus
import CoreMetrics
import Metrics
import Hummingbird

// Prometheus has its own Counter and Timer; these are swift-metrics' API.
typealias Counter = CoreMetrics.Counter
typealias Timer = CoreMetrics.Timer

/// The server's metrics (swift-metrics) and the Prometheus registry `GET /metrics` serves.
///
/// Each server builds its own set from its registry, so tests and several servers in one
/// process do not mix counts. `tandem-server serve` also bootstraps `MetricsSystem` with the
/// same registry, so metrics of the libraries it uses land on the same page.
///
/// ```swift
/// let metrics = ServerMetrics()
/// let router = buildRouter(ServerDependencies(storage: storage, metrics: metrics))
/// print(metrics.registry.emitToString())   // tandem_push_requests_total 0 …
/// ```
public struct ServerMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry
    let factory: PrometheusMetricsFactory

    let requests: Counter
    let pushes: Counter
    let pushReplays: Counter
    let changesApplied: Counter
    let valuesLost: Counter
    let changesPulled: Counter
    let schemasRegistered: Counter
    /// Schema checks dropped because their client went away before or during them.
    let schemaChecksCancelled: Counter
    let pushDuration: Timer
    /// Pulls that answered without waiting (a waiting pull's time is its client's choice).
    let pullDuration: Timer
    /// Pulls waiting for changes now (`pull?wait=`).
    let waitingPulls: Meter

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10),
            .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
            .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5),
        ]
        self.factory = factory
        requests = Counter(label: "tandem_http_requests_total", factory: factory)
        pushes = Counter(label: "tandem_push_requests_total", factory: factory)
        pushReplays = Counter(label: "tandem_push_replays_total", factory: factory)
        changesApplied = Counter(label: "tandem_changes_applied_total", factory: factory)
        valuesLost = Counter(label: "tandem_values_lost_total", factory: factory)
        changesPulled = Counter(label: "tandem_changes_pulled_total", factory: factory)
        schemasRegistered = Counter(label: "tandem_schema_versions_registered_total", factory: factory)
        schemaChecksCancelled = Counter(label: "tandem_schema_checks_cancelled_total", factory: factory)
        pushDuration = Timer(label: "tandem_push_duration_seconds", factory: factory)
        pullDuration = Timer(label: "tandem_pull_duration_seconds", factory: factory)
        waitingPulls = Meter(label: "tandem_pulls_waiting", factory: factory)
    }

    /// Counts an answer by status class and error code (`tandem_http_responses_total`).
    func recordResponse(status: Int, code: String?) {
        requests.increment()
        Counter(
            label: "tandem_http_responses_total",
            dimensions: [("status", "\(status)"), ("code", code ?? "ok")], factory: factory
        ).increment()
    }
}

/// Counts every answer, errors by their code.
struct ResponseMetricsMiddleware: RouterMiddleware {
    let metrics: ServerMetrics
    let activity: ClientActivity

    func handle(
        _ request: Request, context: TandemRequestContext,
        next: (Request, TandemRequestContext) async throws -> Response
    ) async throws -> Response {
        do {
            let response = try await next(request, context)
            metrics.recordResponse(status: response.status.code, code: nil)
            activity.answered(status: response.status.code)
            return response
        } catch let error as APIError {
            metrics.recordResponse(status: error.status.code, code: error.body.error.code)
            activity.answered(status: error.status.code)
            throw error
        } catch let error as any HTTPResponseError {
            activity.answered(status: error.status.code)
            throw error
        } catch {
            activity.answered(status: 500)
            throw error
        }
    }
}

public import ServiceLifecycle

/// Ends every waiting pull at graceful shutdown (``LogSignals/close()``), so they answer at
/// once instead of holding the server's shutdown up. Run it after the application in one
/// `ServiceGroup`: a group shuts its services down in reverse order, so this one hears the
/// shutdown first, before the HTTP server waits for the requests in flight.
///
/// ```swift
/// let group = ServiceGroupConfiguration(services: [app, WaitingPullsService(signals: storage.logSignals)], logger: logger)
/// ```
public struct WaitingPullsService: Service {
    let signals: LogSignals

    public init(signals: LogSignals) {
        self.signals = signals
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
        }
        signals.close()
    }
}

import NIOCore
import NIOHTTPTypes
import Synchronization

/// What one connection may hold: a place among at most `maxConnections` open at once (a
/// connection past them is closed as soon as it opens, before it costs more than its
/// descriptor), and a request body that arrives in full within `bodyTimeout` of its head
/// (else the connection is closed). The time until a request's head is complete (a
/// half-sent request, an idle keep-alive connection) is Hummingbird's idle timeout; a
/// request being answered holds no timer, so a long wait on purpose is never cut.
///
/// ```swift
/// let connections = ConnectionGuard.Counter()
/// HTTP1Channel.Configuration(
///     additionalChannelHandlers: [ConnectionGuard(counter: connections, maxConnections: 4_096, bodyTimeout: .seconds(60))],
///     idleTimeout: .seconds(30))
/// ```
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// The connections open now, shared by every connection's guard.
    final class Counter: Sendable {
        let open = Atomic<Int>(0)
        init() {}
    }

    private let counter: Counter
    private let maxConnections: Int
    private let bodyTimeout: TimeAmount
    private var counted = false
    private var deadline: Scheduled<Void>?

    init(counter: Counter, maxConnections: Int, bodyTimeout: TimeAmount) {
        self.counter = counter
        self.maxConnections = maxConnections
        self.bodyTimeout = bodyTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let now = counter.open.wrappingAdd(1, ordering: .relaxed).newValue
        counted = true
        if now > maxConnections { context.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        if counted {
            counted = false
            counter.open.wrappingSubtract(1, ordering: .relaxed)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            deadline?.cancel()
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            deadline = context.eventLoop.scheduleTask(in: bodyTimeout) { bound.value.close(promise: nil) }
        case .body: break
        case .end:
            deadline?.cancel()
            deadline = nil
        }
        context.fireChannelRead(data)
    }
}

extension TimeAmount {
    /// The same span as `duration`, to the nanosecond.
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}

import NIOCore
import NIOHTTPTypes
import Synchronization

/// What one connection may hold: a place among at most `maxConnections` open at once (a
/// connection past them is closed as soon as it opens, before it costs more than its
/// descriptor); a complete request head within `headerTimeout` of its opening or of its
/// previous answer, however slowly its bytes trickle in (Hummingbird's idle timeout
/// restarts with every byte read); and a request body in full within `bodyTimeout` of its
/// head. Else the connection is closed. A request being answered holds no timer, so a long
/// wait on purpose is never cut.
///
/// ```swift
/// let connections = ConnectionGuard.Counter()
/// HTTP1Channel.Configuration(
///     additionalChannelHandlers: [
///         ConnectionGuard(counter: connections, maxConnections: 4_096, headerTimeout: .seconds(30), bodyTimeout: .seconds(60))
///     ],
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
    private let headerTimeout: TimeAmount
    private let bodyTimeout: TimeAmount
    private var counted = false
    /// When the connection is closed unless the awaited part arrives first: the next
    /// request's head, or the end of the current one's body.
    private var deadline: Scheduled<Void>?
    /// Requests whose head arrived and whose answer has not ended: the next head is awaited
    /// only when there is none (a pipelined request being answered holds no timer).
    private var unanswered = 0

    /// Told when the connection closes, so a pull waiting on it stops waiting.
    private let signals: LogSignals?

    init(counter: Counter, maxConnections: Int, headerTimeout: TimeAmount, bodyTimeout: TimeAmount, signals: LogSignals? = nil) {
        self.signals = signals
        self.counter = counter
        self.maxConnections = maxConnections
        self.headerTimeout = headerTimeout
        self.bodyTimeout = bodyTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let now = counter.open.wrappingAdd(1, ordering: .relaxed).newValue
        counted = true
        if now > maxConnections { return context.close(promise: nil) }
        if context.channel.isActive { signals?.connectionOpened(ObjectIdentifier(context.channel)) }
        close(context, after: headerTimeout)
    }

    /// Closes the connection after `timeout` unless another deadline replaces this one.
    private func close(_ context: ChannelHandlerContext, after timeout: TimeAmount) {
        deadline?.cancel()
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(in: timeout) { bound.value.close(promise: nil) }
    }

    func channelActive(context: ChannelHandlerContext) {
        signals?.connectionOpened(ObjectIdentifier(context.channel))
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        signals?.connectionClosed(ObjectIdentifier(context.channel))
        context.fireChannelInactive()
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
            unanswered += 1
            close(context, after: bodyTimeout)
        case .body: break
        case .end:
            deadline?.cancel()
            deadline = nil
        }
        context.fireChannelRead(data)
    }

    /// A client that stops sending has gone (HTTP/1.1 clients do not half-close): the
    /// connection is closed, so work still running for it is cancelled.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            context.close(promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// The end of an answer starts the wait for the next request's head.
    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            unanswered = max(0, unanswered - 1)
            if unanswered == 0 { close(context, after: headerTimeout) }
        }
        context.write(data, promise: promise)
    }
}

extension TimeAmount {
    /// The same span as `duration`, to the nanosecond.
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}

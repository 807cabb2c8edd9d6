#if canImport(Glibc)
    internal import Glibc  // pthread_mutex_* on Linux
#elseif canImport(Darwin)
    internal import Darwin  // pthread_mutex_* on Apple platforms
#endif

/// A value guarded by a `pthread_mutex_t`, the lock ThreadSanitizer understands.
///
/// `Synchronization.Mutex` is the natural choice, but on Linux (Swift 6.3) it locks with
/// futexes inside the standard library, which ThreadSanitizer does not see: every access it
/// guards is reported as a race (four threads incrementing a counter under `Mutex` give six
/// reports and the right total; under a pthread mutex, none). Apps that run their own tests
/// under ThreadSanitizer would see those reports inside Tandem, so Tandem's locks are these.
///
/// ```swift
/// let counter = Locked(0)
/// counter.withLock { $0 += 1 }
/// let now = counter.withLock { $0 }
/// ```
package final class Locked<Value: ~Copyable>: @unchecked Sendable {
    // @unchecked Sendable, proven: `value` is touched only inside `withLock`, between
    // pthread_mutex_lock and pthread_mutex_unlock on `mutex`, which this class owns and
    // frees only in deinit (no other reference to it exists then). The value goes in and
    // results come out as `sending`, as with `Mutex`, so no unguarded alias of it survives.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    /// A lock around `value`.
    package init(_ value: consuming sending Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed: \(status)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the value, the lock held; other callers wait.
    ///
    /// - Throws: what `body` throws (the lock is released first).
    package func withLock<Result: ~Copyable, Failure: Error>(
        _ body: (inout sending Value) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}

#if canImport(Glibc)
    import Glibc  // flock(2)
#elseif canImport(Darwin)
    import Darwin
#endif
import Foundation
import Logging

/// One sync of a store file at a time, across processes and engines: an exclusive `flock` on
/// `STORE.sync-lock` next to the store. Two syncs at once (a `tandem daemon` and a
/// `tandem sync`, say) would push the same changes under the same keys and both report them
/// pushed; the second now waits, then finds nothing left to push. The lock goes with the
/// process if it dies. A store in memory, or one whose directory takes no new file, syncs
/// without it (an engine still runs one sync at a time).
///
/// ```swift
/// let lock = await StoreSyncLock.acquire(for: storeURL, logger: logger)
/// defer { lock?.release() }
/// ```
struct StoreSyncLock: Sendable {
    private let descriptor: Int32

    /// Waits (polling, without blocking a thread) until no other sync holds the store's lock.
    /// `nil` when no lock can be made (the sync goes on without it).
    ///
    /// - Throws: `CancellationError` when the task is cancelled while it waits.
    static func acquire(for store: URL?, logger: Logger) async throws -> StoreSyncLock? {
        guard let store else { return nil }
        let path = store.path(percentEncoded: false) + ".sync-lock"
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            logger.debug("no sync lock next to the store; syncing without it", metadata: ["path": "\(path)", "errno": "\(errno)"])
            return nil
        }
        var told = false
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                close(descriptor)
                return nil
            }
            if !told {
                logger.info("another sync of this store is running; waiting for it", metadata: ["store": "\(store.path(percentEncoded: false))"])
                told = true
            }
            do {
                try await Task.sleep(for: .milliseconds(20))
            } catch {
                close(descriptor)
                throw error
            }
        }
        return StoreSyncLock(descriptor: descriptor)
    }

    /// Lets the next sync of the store run.
    func release() {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}

import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// An advisory lock on a SQLite data directory (`flock` on `tandem.sqlite.lock`): `serve`
/// holds it shared while it runs, `storage copy` and `storage new-epoch` exclusively, so they
/// never run while a server takes writes they would miss (a copy) or keeps an epoch they
/// replaced (new-epoch). Released when the process ends, however it ends.
///
/// ```swift
/// let lock = try DataDirLock(dataDir: "tandem-data", exclusive: true)
/// defer { lock.release() }
/// ```
final class DataDirLock: Sendable {
    private let descriptor: Int32

    /// - Throws: `ValidationError`-ready text (``Failure``) when the lock is held the other
    ///   way or the file cannot be opened.
    init(dataDir: String, exclusive: Bool) throws {
        let path = (dataDir as NSString).appendingPathComponent("tandem.sqlite.lock")
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw Failure(message: "cannot open \(path): \(String(cString: strerror(errno)))") }
        guard flock(descriptor, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) == 0 else {
            close(descriptor)
            throw Failure(
                message: exclusive
                    ? "a tandem-server is serving \(dataDir) (it holds \(path)); stop it first"
                    : "\(dataDir) is being copied or given a new epoch (tandem-server storage holds \(path)); start the server when it is done")
        }
        self.descriptor = descriptor
    }

    func release() { close(descriptor) }

    struct Failure: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }
}

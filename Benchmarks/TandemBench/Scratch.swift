import Tandem

/// A temporary directory holding every database file of one benchmark process; each store
/// gets its own fresh file, removed (with its -wal and -shm) when no longer needed.
final class Scratch {
    let directory: URL
    private var counter = 0

    init() throws {
        directory = FileManager.default.temporaryDirectory.appending(path: "TandemBench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    /// A path no file uses yet.
    func freshPath(_ name: String) -> String {
        counter += 1
        return directory.appending(path: "\(counter)-\(name).sqlite").path(percentEncoded: false)
    }

    /// Deletes a database file and its WAL companions.
    func remove(_ path: String) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}

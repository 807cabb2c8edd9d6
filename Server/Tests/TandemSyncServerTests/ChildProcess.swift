import Foundation

/// A child process run to its end (the `tandem` CLI, say): its exit status and what it wrote.
struct ChildProcess {
    var status: Int32
    var out: String
    var err: String

    /// Runs `executable` with `arguments` (and `environment`, else this process's) and
    /// waits for it.
    static func run(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil) throws -> ChildProcess {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let output = out.fileHandleForReading.readDataToEndOfFile(), errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return ChildProcess(status: process.terminationStatus, out: String(decoding: output, as: UTF8.self), err: String(decoding: errors, as: UTF8.self))
    }
}

import ArgumentParser
import Foundation
import Logging
#if canImport(Glibc)
    import Glibc
#endif

/// `tandem`: the command line tool of the Tandem sync store.
///
/// Exit codes: 0 success (a compatible schema), 1 a failed check, 2 bad input or usage.
@main
struct TandemCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tandem",
        abstract: "Tandem's command line tool: stores, records, sync, and schema compatibility checks.",
        subcommands: [
            SchemaCommand.self, InitCommand.self, RecordsCommand.self, SyncCommand.self, ResyncCommand.self, StatusCommand.self,
            ConflictsCommand.self, QuarantineCommand.self, HistoryCommand.self, DaemonCommand.self,
        ])

    /// One malloc arena instead of glibc's default of eight per core, unless
    /// `MALLOC_ARENA_MAX` says otherwise. A sync's tasks allocate on several threads, and
    /// each thread's arena kept its own freed memory: a 100 k push with two batches in
    /// flight peaked at 146–180 MiB with the default, 112 with two arenas and 77 with one,
    /// at the same speed (docs/benchmarks.md).
    static func limitMallocArenas() {
        #if canImport(Glibc)
            // mallopt is in <malloc.h>, which the Glibc module does not export: looked up by name.
            typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
            let arenaMax: Int32 = -8  // M_ARENA_MAX
            guard ProcessInfo.processInfo.environment["MALLOC_ARENA_MAX"] == nil,
                let symbol = dlsym(dlopen(nil, RTLD_NOW), "mallopt")
            else { return }
            _ = unsafeBitCast(symbol, to: Mallopt.self)(arenaMax, 1)
        #endif
    }

    /// Parses and runs the command, mapping every failure to exit code 1 (a check failed) or
    /// 2 (bad input or usage), with a message on standard error.
    static func main() async {
        limitMallocArenas()
        // Only the executable sets up logging: warnings and errors on standard error, more
        // with TANDEM_LOG_LEVEL=info|debug|trace.
        let level = ProcessInfo.processInfo.environment["TANDEM_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .warning
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch let failure as CheckFailed {
            Foundation.exit(failure.exitCode)
        } catch let error as CLIError {
            FileHandle.standardError.write(Data("tandem: error: \(error.message)\n".utf8))
            Foundation.exit(2)
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                print(fullMessage(for: error))
                Foundation.exit(0)
            }
            FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
            Foundation.exit(2)
        }
    }
}

/// `tandem schema …`.
struct SchemaCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema",
        abstract: "Extract a schema from Swift sources and check that a new model version keeps sync working.",
        subcommands: [SchemaExtractCommand.self, SchemaCheckCommand.self, SchemaDiffCommand.self, SchemaPublishCommand.self, SchemaRulesCommand.self])
}

/// A check that found breaking changes (exit 1); its report is already printed.
struct CheckFailed: Error {
    var exitCode: Int32 = 1
}

/// Bad input: exit 2 with a message that says what to fix.
struct CLIError: Error, CustomStringConvertible {
    var message: String
    init(_ message: String) { self.message = message }
    /// The message alone: where a caller prints the error (the sync engine wraps a failing
    /// token closure's error in its own message), the user reads what to fix.
    var description: String { message }
}

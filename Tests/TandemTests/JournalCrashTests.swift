import Foundation
import Testing
@testable import Tandem

/// Kills a real writer process (SIGKILL) in the middle of saves, many times, and checks after
/// each restart that rows and journal agree exactly.
@Suite("Change journal under kill -9", .serialized)
struct JournalCrashTests {
    /// The writer executable, built next to the test bundle by `swift build --build-tests`.
    static var writerURL: URL? {
        var directory = URL(filePath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appending(path: "JournalCrashWriter")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }

    @Test func rowsAndJournalAgreeAfterEveryKill() async throws {
        let writer = try #require(Self.writerURL, "JournalCrashWriter is not built: run `swift build --build-tests` (Scripts/test.sh does)")
        let directory = TemporaryDirectory()
        let store = directory.file("crash.sqlite")
        let rounds = Int(ProcessInfo.processInfo.environment["TANDEM_CRASH_ROUNDS"] ?? "") ?? 12
        var lastToken = HistoryToken.start
        var killedMidWrite = 0
        for round in 0..<rounds {
            let process = Process()
            process.executableURL = writer
            process.arguments = [store.path, String(round + 1)]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            // Wait until the store is open, then let it write for a random while.
            _ = output.fileHandleForReading.availableData
            try await Task.sleep(for: .milliseconds(Int.random(in: 50...400)))
            #expect(process.isRunning, "the writer stopped by itself in round \(round)")
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            #expect(process.terminationReason == .uncaughtSignal)

            // "Restart": open the store again and check every invariant.
            let container = try ModelContainer(for: CrashNote.self, configurations: ModelConfiguration(url: store, dataset: "crash"))
            let integrity = try container.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
            #expect(integrity == ["ok"])
            let history = try container.fetchHistory(HistoryDescriptor())
            let orphans = try container.read { db in
                try Int.fetchOne(
                    db,
                    sql: """
                        SELECT COUNT(*) FROM tandem_history_change c WHERE NOT EXISTS (
                            SELECT 1 FROM tandem_history_transaction t WHERE c.id BETWEEN t.first_change AND t.last_change AND c.token = t.token)
                        """)
            }
            #expect(orphans == 0, "history changes without their transaction in round \(round)")
            #expect(history.allSatisfy { !$0.changes.isEmpty })
            let replayed = replay(history)
            let table = try tableState(container, entity: "CrashNote")
            let mismatched = Set(replayed.keys).union(table.keys).filter { replayed[$0] != table[$0] }.sorted()
            #expect(
                mismatched.isEmpty,
                "replaying the journal does not give the table in round \(round): \(mismatched.count) records differ, e.g. \(mismatched.prefix(1).map { "\($0): journal \(replayed[$0] ?? [:]) vs row \(table[$0] ?? [:])" })"
            )
            #expect(!table.isEmpty)
            let current = try container.currentHistoryToken()
            #expect(current >= lastToken, "tokens went back after a restart")
            if current == lastToken { killedMidWrite += 1 }
            lastToken = current
        }
        #expect(killedMidWrite < rounds, "no round committed anything")
    }
}

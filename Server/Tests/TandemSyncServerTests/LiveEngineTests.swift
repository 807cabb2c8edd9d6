import Foundation
import Testing
import Tandem
@testable import TandemSync

@Model final class LiveNote {
    var title: String
    init(title: String) { self.title = title }
}

/// The live engine in an app's process: what another replica pushes reaches an open
/// `ModelContext`'s object (the pattern the README shows), and cancelling the task stops it.
@Suite("Live engine in an app", .serialized)
struct LiveEngineTests {
    static func container() throws -> ModelContainer {
        let url = FileManager.default.temporaryDirectory.appending(path: "tandem-live-\(UUID().uuidString).store")
        return try ModelContainer(for: [LiveNote.self], configurations: [ModelConfiguration(url: url, dataset: "notes")])
    }

    @MainActor
    @Test(arguments: TransportKind.allCases)
    func anEditPushedElsewhereReachesAnOpenContextsObject(kind: TransportKind) async throws {
        let server = try await SyncServerProcess.make()
        let configuration = SyncConfiguration(token: { server.token })
        let phone = try Self.container(), laptop = try Self.container()
        let laptopEngine = SyncEngine(container: laptop, transport: try kind.make(server.base), configuration: configuration)
        let laptopContext = ModelContext(laptop)
        let note = LiveNote(title: "draft")
        laptopContext.insert(note)
        try laptopContext.save()
        _ = try await laptopEngine.sync()
        // The phone: a live engine, a context showing the note, merged as the README shows.
        let phoneEngine = SyncEngine(container: phone, transport: try kind.make(server.base), configuration: configuration)
        _ = try await phoneEngine.sync()
        let context = ModelContext(phone)
        let shown = try #require(try context.fetch(FetchDescriptor<LiveNote>()).first)
        #expect(shown.title == "draft")
        let live = Task { await phoneEngine.runLive(every: .seconds(600)) }
        // From the token now: a merging task that starts late (a loaded machine) still sees
        // the edit.
        let now = try phone.currentHistoryToken()
        let merging = Task { @MainActor in
            for await transaction in phone.historyTransactions(after: now) where transaction.author == "sync" {
                context.merge([transaction])
            }
        }
        defer { merging.cancel() }
        try await Task.sleep(for: .milliseconds(500))  // the phone's pull waits at the server
        note.title = "final"
        try laptopContext.save()
        _ = try await laptopEngine.sync()
        let started = ContinuousClock.now
        // Bounds far below the 600 s between the engine's own syncs: only the waiting pull
        // brings the edit that soon, however loaded the machine.
        while shown.title != "final", ContinuousClock.now - started < .seconds(120) { try await Task.sleep(for: .milliseconds(20)) }
        #expect(shown.title == "final", "the open object shows the laptop's edit without a fetch")
        #expect(ContinuousClock.now - started < .seconds(120))
        let stopping = ContinuousClock.now
        live.cancel()
        await live.value
        #expect(ContinuousClock.now - stopping < .seconds(20), "cancelling the task stops the live engine, not the end of its waiting pull")
    }
}

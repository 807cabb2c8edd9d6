import Foundation
import Observation
import Tandem
import TandemSync
import TandemURLSession

/// A note of the example app.
@Model final class Note {
    var title: String
    var done = false
    init(title: String) { self.title = title }
}

/// The example app's sync, as the README shows it: one store, one engine over
/// `URLSessionTransport`, live while the app is in the foreground, one sync when it goes to
/// the background, and the status a view shows. Built on every platform, so this part of the
/// README's code compiles in this repository's CI (Linux); the views (`AppViews.swift`) build
/// where SwiftUI is, which that CI does not check.
@MainActor @Observable
final class AppSync {
    let container: ModelContainer
    /// The context the views read from and write to; it takes what a sync pulled.
    let context: ModelContext
    private let engine: SyncEngine
    /// What the status line shows, read again after every sync.
    private(set) var status: SyncStatus?
    /// The last sync's failure, until a sync succeeds.
    private(set) var lastError: SyncError?
    private var live: Task<Void, Never>?
    private var merging: Task<Void, Never>?

    init(storeURL: URL, server: String, token: @escaping @Sendable () async throws -> String) throws {
        container = try ModelContainer(for: [Note.self], configurations: [ModelConfiguration(url: storeURL, dataset: "notes")])
        context = ModelContext(container)
        engine = SyncEngine(
            container: container, transport: try URLSessionTransport(baseURL: server),
            configuration: SyncConfiguration(token: token))
        status = try? SyncStatus(of: container)
    }

    /// In the foreground: live sync (a pull waits at the server; local saves go out within
    /// moments). The open context takes what any sync pulls (its objects change, views update).
    func enterForeground() {
        if merging == nil {
            merging = Task { [container, context] in
                for await transaction in container.historyTransactions() where transaction.author == "sync" {
                    context.merge([transaction])
                }
            }
        }
        guard live == nil else { return }
        // The engine is an actor: the syncs run there, not on the main actor. The closure
        // holds this object weakly (the live task runs until the background cancels it).
        let onSync: @Sendable (Result<SyncSummary, SyncError>) -> Void = { [weak self] result in
            Task { @MainActor in await self?.synced(result) }
        }
        live = Task { [engine] in await engine.runLive(onSync: onSync) }
    }

    /// Going to the background: the live sync stops, and one sync pushes what is left. Call it
    /// inside a background task of the app's (`beginBackgroundTask`), and cancel the task
    /// running it when that time runs out: a cancelled sync stops at once and loses nothing.
    func enterBackground() async {
        live?.cancel()
        live = nil
        await syncOnce()
    }

    /// One sync: for a background refresh (`BGAppRefreshTask`) or a pull-to-refresh.
    func syncOnce() async {
        do {
            await synced(.success(try await engine.sync()))
        } catch let error as SyncError {
            await synced(.failure(error))
        } catch is CancellationError {
            // The background time ran out: not a failure to show; the next sync goes on.
            await synced(nil)
        } catch {
            await synced(.failure(SyncError(.store, "\(error)")))
        }
    }

    /// `result`: what a sync ended with, `nil` for a cancelled one (which changes nothing
    /// shown but the counts).
    private func synced(_ result: Result<SyncSummary, SyncError>?) async {
        switch result {
        case .failure(let error): lastError = error
        case .success: lastError = nil
        case nil: break
        }
        // Read off the main actor: it counts the unpushed changes.
        status = await Task.detached { [container] in try? SyncStatus(of: container) }.value
    }

    /// The status line: pending changes, conflicts, the last failure.
    var statusLine: String {
        guard let status else { return "Not synced yet" }
        var parts = [status.pendingChanges == 0 ? "Synced" : "\(status.pendingChanges) changes to sync"]
        if status.conflicts > 0 { parts.append("\(status.conflicts) conflicts resolved") }
        if let lastError { parts.append(lastError.isTransient ? "offline, retrying" : lastError.message) }
        return parts.joined(separator: " · ")
    }
}

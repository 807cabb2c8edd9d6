#if canImport(SwiftUI)
    // The views: Apple platforms only (SwiftUI); AppSync.swift builds everywhere. This
    // repository's CI (Linux) does not compile this file.
    import SwiftUI
    import Tandem
    #if os(iOS)
        import BackgroundTasks
        import UIKit
    #endif

    /// The app's store and sync, opened once (a failure is shown, not a crash).
    @MainActor let opened = Result {
        try AppSync(
            storeURL: URL.applicationSupportDirectory.appending(path: "notes.store"),
            server: "https://sync.example.com", token: { "tdm_…" })  // your sign-in's token
    }

    /// The example app: live sync in the foreground; on the way to the background, one sync
    /// inside a background task and a background refresh scheduled (iOS: list "notes.sync"
    /// under `BGTaskSchedulerPermittedIdentifiers` and `fetch` under `UIBackgroundModes` in
    /// Info.plist).
    struct NotesApp: App {
        @Environment(\.scenePhase) private var phase

        var body: some Scene {
            WindowGroup {
                switch opened {
                case .success(let sync): NotesView().environment(sync)
                case .failure(let error): Text(verbatim: "The notes could not be opened: \(error.localizedDescription)")
                }
            }
            .onChange(of: phase) { _, phase in
                guard case .success(let sync) = opened else { return }
                switch phase {
                case .active: sync.enterForeground()
                case .background: BackgroundSync.finish(sync)
                default: break
                }
            }
            #if os(iOS)
                .backgroundTask(.appRefresh("notes.sync")) { @MainActor in
                    guard case .success(let sync) = opened else { return }
                    await sync.syncOnce()
                }
            #endif
        }
    }

    /// One last sync while the system lets the app run, cancelled when that time runs out.
    @MainActor final class BackgroundSync {
        private var work: Task<Void, Never>?
        #if os(iOS)
            private var id = UIBackgroundTaskIdentifier.invalid

            /// Ends the background task, once: when the sync ends or when the time runs out
            /// (the system ends an app whose expired task is not ended at once).
            private func end() {
                guard id != .invalid else { return }
                UIApplication.shared.endBackgroundTask(id)
                id = .invalid
            }
        #endif

        static func finish(_ sync: AppSync) {
            #if os(iOS)
                try? BGTaskScheduler.shared.submit(BGAppRefreshTaskRequest(identifier: "notes.sync"))
                let background = BackgroundSync()
                background.id = UIApplication.shared.beginBackgroundTask(withName: "sync") {
                    // The sync stops where it is and loses nothing (the next one goes on).
                    background.work?.cancel()
                    background.end()
                }
                background.work = Task {
                    await sync.enterBackground()
                    background.end()
                }
            #else
                Task { await sync.enterBackground() }
            #endif
        }
    }

    /// The notes, and the sync's status under them.
    struct NotesView: View {
        @Environment(AppSync.self) private var sync
        @State private var notes: [Note] = []

        var body: some View {
            List(notes, id: \.persistentModelID) { note in Text(note.title) }
                .safeAreaInset(edge: .bottom) { Text(sync.statusLine).font(.footnote) }
                .refreshable { await sync.syncOnce() }
                .task(id: sync.status) { notes = (try? sync.context.fetch(FetchDescriptor<Note>())) ?? [] }
        }
    }
#endif

#if canImport(SwiftUI)
    // The views: Apple platforms only (SwiftUI); AppSync.swift builds everywhere.
    import SwiftUI
    import Tandem

    /// The example app: live sync in the foreground, one sync on the way to the background
    /// and in background refreshes (register the identifier under
    /// `BGTaskSchedulerPermittedIdentifiers` in Info.plist, and schedule a
    /// `BGAppRefreshTaskRequest`).
    struct NotesApp: App {
        @State private var sync = try! AppSync(
            storeURL: URL.applicationSupportDirectory.appending(path: "notes.store"),
            server: "https://sync.example.com", token: { "tdm_…" })  // your sign-in's token
        @Environment(\.scenePhase) private var phase

        var body: some Scene {
            WindowGroup { NotesView().environment(sync) }
                .onChange(of: phase) { _, phase in
                    switch phase {
                    case .active: sync.enterForeground()
                    case .background: Task { await sync.enterBackground() }
                    default: break
                    }
                }
                .backgroundTask(.appRefresh("notes.sync")) { await sync.syncOnce() }
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

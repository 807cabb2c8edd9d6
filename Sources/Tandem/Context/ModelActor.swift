/// An actor with its own ``ModelContext``, for work off the main thread. `@ModelActor`
/// implements it.
///
/// ```swift
/// @ModelActor actor Importer {
///     func add(_ titles: [String]) throws {
///         for title in titles { modelContext.insert(Note(title: title)) }
///         try modelContext.save()
///     }
/// }
/// try await Importer(modelContainer: container).add(["a", "b"])
/// ```
public protocol ModelActor: Actor {
    nonisolated var modelContainer: ModelContainer { get }
    var modelContext: ModelContext { get }
}

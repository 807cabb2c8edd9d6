import TandemWire

/// A dataset as a request reaches it: which one, whose, and the caller's role in it.
///
/// ```swift
/// let access = try await routes.dataset(context, needs: .writer)
/// access.name          // "todos": the name in its record URIs, for every member
/// ```
struct DatasetAccess: Sendable {
    var reference: DatasetReference
    var id: Int64
    var owner: ServerUser
    var role: DatasetRole

    /// The dataset's own name, which its record URIs carry.
    var name: String { reference.name }
}

import TandemSchema

/// A dataset as a client names it: its own (`todos`) or one shared with it
/// (`alice/todos`, owner and name). In a URL path it is one segment, `todos` or
/// `alice~todos`: `~` is in neither user nor dataset names.
///
/// ```swift
/// DatasetReference("alice/todos")?.pathSegment   // "alice~todos"
/// DatasetReference(pathSegment: "todos")?.owner  // nil: the caller's own
/// ```
public struct DatasetReference: Sendable, Hashable, CustomStringConvertible {
    /// The owner's user name; `nil` for the caller's own dataset.
    public var owner: String?
    public var name: String

    public init?(owner: String?, name: String) {
        guard Self.isName(name), owner.map(Self.isName) ?? true else { return nil }
        self.owner = owner
        self.name = name
    }

    /// `NAME` or `OWNER/NAME`.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count <= 2 else { return nil }
        self.init(owner: parts.count == 2 ? parts[0] : nil, name: parts[parts.count - 1])
    }

    /// `NAME` or `OWNER~NAME`.
    public init?(pathSegment: String) {
        let parts = pathSegment.split(separator: "~", omittingEmptySubsequences: false).map(String.init)
        guard parts.count <= 2 else { return nil }
        self.init(owner: parts.count == 2 ? parts[0] : nil, name: parts[parts.count - 1])
    }

    public var pathSegment: String { owner.map { "\($0)~\(name)" } ?? name }
    public var description: String { owner.map { "\($0)/\(name)" } ?? name }

    /// What dataset and user names are (``DatasetName/isValid(_:)``).
    public static func isName(_ name: String) -> Bool { DatasetName.isValid(name) }
}

/// What a member may do with a shared dataset. The owner is an admin who cannot be removed.
///
/// ```swift
/// DatasetRole.writer.allows(.reader)   // true: a writer pulls too
/// ```
public enum DatasetRole: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
    /// Pulls, and reads the schema history.
    case reader
    /// Also pushes, and registers compatible schema versions (as the sync handshake does).
    case writer
    /// Also manages the members.
    case admin

    /// Whether this role may do what `needed` may.
    public func allows(_ needed: DatasetRole) -> Bool { self >= needed }

    public static func < (lhs: DatasetRole, rhs: DatasetRole) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// One member of a dataset, as `GET /v1/datasets/{dataset}/members` lists them.
public struct DatasetMember: Sendable, Hashable, Codable {
    public var user: String
    public var role: DatasetRole
    public init(user: String, role: DatasetRole) {
        self.user = user
        self.role = role
    }
}

/// The answer to `GET /v1/datasets/{dataset}/members`: the owner, then the members by name.
public struct DatasetMembers: Sendable, Hashable, Codable {
    public var owner: String
    public var members: [DatasetMember]
    public init(owner: String, members: [DatasetMember]) {
        self.owner = owner
        self.members = members
    }
}

/// The body of `PUT /v1/datasets/{dataset}/members/{user}`.
public struct MemberRole: Sendable, Hashable, Codable {
    public var role: DatasetRole
    public init(role: DatasetRole) { self.role = role }
}

/// How a schema change affects sync, where old and new clients coexist.
///
/// Ordered by severity, so `findings.map(\.verdict).max()` is the verdict of a whole check.
///
/// ```swift
/// let worst = report.findings.map(\.verdict).max() ?? .safe
/// if worst == .breaking { print("do not release") }
/// ```
public enum Verdict: String, Sendable, Hashable, Codable, Comparable, CaseIterable {
    /// Old and new clients keep exchanging every record without loss.
    case safe
    /// Sync keeps working, but some clients see something surprising (a default, an unknown
    /// enum case, a relaxed rule); review before releasing.
    case warning
    /// Old or new clients cannot read or write what the other produces: data is lost or sync fails.
    case breaking

    private var rank: Int {
        switch self {
        case .safe: 0
        case .warning: 1
        case .breaking: 2
        }
    }

    public static func < (lhs: Verdict, rhs: Verdict) -> Bool { lhs.rank < rhs.rank }
}

public import TandemWire
import TandemConflicts

/// How a conflict between an unpushed local edit and a pulled value of the same column is
/// decided. The default, ``lastWriterWins``, keeps the newer HLC stamp. With the others, when
/// the decided value differs from the newer one, it is written as a **new local edit** right
/// after the pulled page (author `sync.resolve`): it gets a fresh stamp, newer than both, is
/// pushed by the next sync, and so wins everywhere.
///
/// ```swift
/// var configuration = SyncConfiguration(token: { token })
/// configuration.conflictPolicies["Todo.title"] = .serverWins
/// configuration.conflictPolicies["Counter.value"] = .custom { values in   // add both increments
///     guard case .integer(let local) = values.local, case .integer(let remote) = values.remote else { return values.remote }
///     return .integer(local + remote - (values.base.flatMap { if case .integer(let b) = $0 { b } else { nil } } ?? 0))
/// }
/// ```
public enum ConflictPolicy: Sendable {
    /// The newer stamp wins (the default).
    case lastWriterWins
    /// The pulled value wins, even against a newer local edit.
    case serverWins
    /// The local edit wins, even against a newer pulled value.
    case clientWins
    /// `resolve(values)` decides; its result becomes a new local edit.
    case custom(@Sendable (ConflictValues) -> WireValue)

    /// The rule the conflict log names for this policy.
    var rule: ConflictRule {
        switch self {
        case .lastWriterWins: .lastWriterWins
        case .serverWins: .serverWins
        case .clientWins: .clientWins
        case .custom: .custom
        }
    }

    var name: String { rule.rawValue }
}

/// What a ``ConflictPolicy/custom(_:)`` resolver sees.
public struct ConflictValues: Sendable, Hashable {
    /// The record URI.
    public var record: String
    /// The column.
    public var attribute: String
    /// This store's unpushed value.
    public var local: WireValue
    /// The pulled value.
    public var remote: WireValue
    /// The value both started from, when known (protocol v1 does not carry it: `nil`).
    public var base: WireValue?
}

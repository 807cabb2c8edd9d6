public import Foundation

/// A push, as a storage runs it: what it reads first, and its logic, run on a
/// ``PushWorkspace`` holding what was read (perhaps more than once: see
/// ``PushWorkspace/perform(_:on:)``). `run` returns the push's answer, stored under its
/// idempotency key.
///
/// ```swift
/// let job = PushJob(reads: plan.reads(for: changes), changes: changes.count) { workspace in
///     try processor.apply(changes, stamps: stamps, plan: plan, to: &workspace).json
/// }
/// ```
public struct PushJob: Sendable {
    public var reads: PushKeys
    /// How many changes the push holds: room for as many records is made at once.
    public var changes: Int
    public var run: @Sendable (inout PushWorkspace) throws -> Data

    public init(reads: PushKeys = PushKeys(), changes: Int = 0, run: @escaping @Sendable (inout PushWorkspace) throws -> Data) {
        self.reads = reads
        self.changes = changes
        self.run = run
    }
}

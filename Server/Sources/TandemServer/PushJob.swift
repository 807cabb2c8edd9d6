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
    /// The bytes the dataset's owner may store (``UserQuota/bytes``): checked in the push's
    /// transaction, after its idempotency key (a replay is answered whatever the use), so
    /// pushes racing each other cannot pass it together; `nil`: no limit.
    public var byteLimit: Int64?

    public init(
        reads: PushKeys = PushKeys(), changes: Int = 0, byteLimit: Int64? = nil, run: @escaping @Sendable (inout PushWorkspace) throws -> Data
    ) {
        self.reads = reads
        self.changes = changes
        self.byteLimit = byteLimit
        self.run = run
    }
}

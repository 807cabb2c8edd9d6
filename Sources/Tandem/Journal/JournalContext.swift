/// What a container's journaled writes need: the functions' state, the store's node id and
/// the wall clock.
struct JournalContext: Sendable {
    let state: JournalState
    let node: UInt64
    let clock: WallClock
}

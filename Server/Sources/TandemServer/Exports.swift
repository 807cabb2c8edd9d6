// The conflict core's record state and merge are part of the storage protocol's vocabulary.
@_exported public import TandemConflicts

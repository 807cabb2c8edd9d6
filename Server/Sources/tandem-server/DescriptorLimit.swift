#if canImport(Glibc)
    import Glibc  // getrlimit/setrlimit on Linux
#elseif canImport(Darwin)
    import Darwin  // getrlimit/setrlimit on macOS
#endif

#if canImport(Glibc)
    private let openFiles = Int32(RLIMIT_NOFILE.rawValue)  // an enum case in Glibc
#else
    private let openFiles = RLIMIT_NOFILE
#endif

/// The process's limit on open file descriptors.
///
/// ```swift
/// let descriptors = DescriptorLimit.raiseToHardLimit()   // e.g. 1 024 → 524 288
/// ```
enum DescriptorLimit {
    /// Raises the soft limit to the hard one (at most 1 048 576) and returns the soft limit
    /// now in force (the old one when it cannot be raised).
    static func raiseToHardLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(openFiles, &limit) == 0 else { return 1_024 }
        let wanted = min(limit.rlim_max, 1 << 20)
        if limit.rlim_cur < wanted {
            var raised = limit
            raised.rlim_cur = wanted
            if setrlimit(openFiles, &raised) == 0 { limit = raised }
        }
        return Int(clamping: limit.rlim_cur)
    }
}

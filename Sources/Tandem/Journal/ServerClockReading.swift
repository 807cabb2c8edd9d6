#if canImport(Glibc)
    import Glibc  // clock_gettime(CLOCK_BOOTTIME): a clock that NTP and the user cannot step
#endif
import Foundation

/// A reading of a clock that only moves forward while the machine runs, sleep included
/// (Linux's `CLOCK_BOOTTIME`), with the id of the boot it belongs to. Readings of one boot
/// can be subtracted whatever the wall clock did meanwhile.
public struct MonotonicReading: Sendable, Hashable {
    /// The boot the reading belongs to (`/proc/sys/kernel/random/boot_id`).
    public var bootID: String
    /// Milliseconds since the boot.
    public var milliseconds: Int64

    public init(bootID: String, milliseconds: Int64) {
        self.bootID = bootID
        self.milliseconds = milliseconds
    }

    /// This machine's boot clock now; `nil` where there is none Tandem reads (not Linux).
    public static func boot() -> MonotonicReading? {
        #if canImport(Glibc)
            guard let id = bootID else { return nil }
            var time = timespec()
            guard clock_gettime(CLOCK_BOOTTIME, &time) == 0 else { return nil }
            return MonotonicReading(bootID: id, milliseconds: Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000)
        #else
            return nil
        #endif
    }

    private static let bootID: String? = {
        guard let text = try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8) else { return nil }
        let id = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return id.isEmpty || id.contains(":") ? nil : id
    }()
}

/// What a store knows of its sync server's clock: the server's time at one moment, with
/// this machine's wall clock (and boot clock, where it has one) at the same moment, give or
/// take ``uncertainty``. When the wall clock is further from the server's time estimated
/// from it than a second plus that uncertainty, the journal stamps with the estimate, so a
/// replica whose clock is wrong still stamps its edits as the server would: never ahead of
/// what the server accepts, never so far behind that its edits lose to older ones. Closer,
/// the wall clock orders edits more finely than the estimate, whose error is up to the
/// uncertainty: a reading from a slow answer (a loaded machine, a slow network) must not
/// move a right clock's stamps by its error, or two replicas' edits a moment apart would
/// come out in the wrong order.
///
/// ```swift
/// let reading = ServerClockReading(serverMilliseconds: 1_700_000_000_000, wallMilliseconds: 1_699_999_000_000)
/// reading.estimate(wall: 1_699_999_000_500, boot: nil)   // 1_700_000_000_500
/// ```
///
/// The estimate runs on the boot clock when the reading has one of this boot (a wall clock
/// corrected since the reading changes nothing). After a reboot the wall clock may have been
/// set right: a clock that was ahead is taken as it is (stamping behind by the old offset
/// would make every edit lose to older ones), one that was behind keeps its offset (if it
/// was set right meanwhile, its stamps come out ahead, and the server refuses and the store
/// re-stamps them; behind, they would lose without a word). Without boot clocks (not
/// Linux), it is the wall clock plus the offset.
public struct ServerClockReading: Sendable, Hashable {
    public var serverMilliseconds: Int64
    public var wallMilliseconds: Int64
    public var boot: MonotonicReading?
    /// How far (ms) the server's time may have been from ``serverMilliseconds`` at the
    /// moment the wall clock was read: half the exchange the time came from (the server read
    /// its clock somewhere within it; the reading takes the middle).
    public var uncertainty: Int64

    public init(serverMilliseconds: Int64, wallMilliseconds: Int64, boot: MonotonicReading? = nil, uncertainty: Int64 = 0) {
        self.serverMilliseconds = serverMilliseconds
        self.wallMilliseconds = wallMilliseconds
        self.boot = boot
        self.uncertainty = max(0, uncertainty)
    }

    /// The server's clock minus this machine's wall clock when read (ms; negative: this
    /// machine's clock is ahead).
    public var offset: Int64 { serverMilliseconds - wallMilliseconds }

    /// The server's time now, from this machine's wall clock and boot clock now.
    public func estimate(wall: Int64, boot now: MonotonicReading?) -> Int64 {
        if let then = boot, let now {
            guard now.bootID == then.bootID, now.milliseconds >= then.milliseconds else { return max(wall, wall + offset) }
            return serverMilliseconds + (now.milliseconds - then.milliseconds)
        }
        return wall + offset
    }

    /// The stored form: `v2:<server ms>:<wall ms>:<uncertainty ms>[:<boot id>:<boot ms>]`.
    public var text: String {
        "v2:\(serverMilliseconds):\(wallMilliseconds):\(uncertainty)" + (boot.map { ":\($0.bootID):\($0.milliseconds)" } ?? "")
    }

    /// Reads ``text``; `nil` when malformed (the store then stamps with its wall clock until
    /// the next answer from the server).
    public init?(text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 4 || parts.count == 6, parts[0] == "v2",
            let server = Int64(parts[1]), let wall = Int64(parts[2]), let uncertainty = Int64(parts[3]), uncertainty >= 0
        else { return nil }
        var boot: MonotonicReading?
        if parts.count == 6 {
            guard let milliseconds = Int64(parts[5]), !parts[4].isEmpty else { return nil }
            boot = MonotonicReading(bootID: String(parts[4]), milliseconds: milliseconds)
        }
        self.init(serverMilliseconds: server, wallMilliseconds: wall, boot: boot, uncertainty: uncertainty)
    }
}

#if canImport(Glibc)
    import Glibc  // close(2) for the half-sent requests
#endif
import Foundation
import NIOConcurrencyHelpers
import Testing
import TandemSchema
import TandemWire

/// Tenant A attacks the real process (large schemas, compatible and breaking, over and over;
/// pulls of 8 MiB entries; half-sent requests; pushes naming unknown schema versions) while
/// tenant B pushes and pulls. B is never stalled and its data is whole; the server's peak
/// memory stays bounded. The bound on B's requests is a stall bound (before the fix they
/// waited 17–81 s behind one schema check); the latency figures are
/// `Scripts/bench-fairness.sh`'s.
@Suite("Fairness between tenants (the process)", .serialized)
struct FairnessProcessTests {
    static func attributes(_ count: Int, plus extra: [String] = []) throws -> Data {
        let names = (0..<count).map { "a\($0)" } + extra
        return try Schema(entities: [
            Schema.Entity(name: "Wide", attributes: names.map { Schema.Attribute(name: $0, type: .scalar(.string), isOptional: true) })
        ]).canonicalJSON()
    }

    /// Runs blocking `body` (requests on sockets) on a thread of its own: the concurrency pool has
    /// as many threads as cores, and blocking them would stall B behind A's loops.
    static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
        }
    }

    /// One HTTP/1.1 request over a socket of its own (`Connection: close`), read to the end:
    /// the load runs in this process, without spawning a curl per request (Foundation's
    /// `Process.run` is not safe to call from many threads at once).
    static func http(
        _ method: String, port: Int, _ path: String, token: String, body: Data? = nil, key: String? = nil, timeout: Int = 60,
        timeoutMilliseconds: Int? = nil
    ) -> (status: Int, body: String) {
        let fd = SlowClientTests.connectLoopback(port: port)
        guard fd >= 0 else { return (0, "connect failed") }
        defer { close(fd) }
        var head = "\(method) \(path) HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer \(token)\r\n"
        if let key { head += "Idempotency-Key: \(key)\r\n" }
        head += "Content-Length: \(body?.count ?? 0)\r\nContent-Type: application/json\r\n\r\n"
        var request = Data(head.utf8)
        if let body { request.append(body) }
        let sent = request.withUnsafeBytes { bytes -> Bool in
            var offset = 0
            while offset < bytes.count {
                let n = send(fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
                guard n > 0 else { return false }
                offset += n
            }
            return true
        }
        guard sent else { return (0, "send failed") }
        var answer = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        let deadline = ContinuousClock.now + .milliseconds(timeoutMilliseconds ?? timeout * 1000)
        while true {
            // Waits for the answer until the deadline, then gives up (closing the connection).
            let left = deadline - ContinuousClock.now
            var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(max(0, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000))
            guard poll(&ready, 1, milliseconds) > 0 else { break }
            let n = recv(fd, &buffer, buffer.count, 0)
            guard n > 0 else { break }
            answer += buffer[..<n]
        }
        let text = String(decoding: answer, as: UTF8.self)
        let status = Int(text.split(separator: " ", maxSplits: 2).dropFirst().first ?? "") ?? 0
        let bodyText = text.range(of: "\r\n\r\n").map { String(text[$0.upperBound...]) } ?? ""
        return (status, bodyText)
    }

    static func now() -> String { ServerHarness.stamp(UInt64(Date().timeIntervalSince1970 * 1000)) }

    /// The server's peak resident memory (`VmHWM`), in MiB.
    static func peakMiB(_ pid: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) / 1024
    }

    @Test func anAttackingTenantNeitherStallsAnotherNorTouchesItsData() async throws {
        let executable = try #require(ServerProcessTests.serverURL).path(percentEncoded: false)
        let dataDir = try ServerProcessTests.temporaryDirectory()
        let a = try ServerProcessTests.setUp(dataDir)
        #expect(try ServerProcessTests.run(executable, ["users", "add", "bob", "--data-dir", dataDir]).status == 0)
        let b = try ServerProcessTests.run(executable, ["tokens", "create", "bob", "--data-dir", dataDir]).output.trimmingCharacters(in: .whitespacesAndNewlines)
        let server = try ServerProcessTests.startServer(dataDir, ["--max-body-bytes", "9000000", "--idle-timeout", "30", "--log-level", "critical"])
        defer {
            server.process.terminate()
            server.process.waitUntilExit()
        }
        let port = server.port
        for (token, dataset) in [(a, "huge"), (a, "wide"), (b, "todos")] {
            #expect(Self.http("PUT", port: port, "/v1/datasets/\(dataset)", token: token).status == 201)
        }
        for (token, dataset) in [(a, "huge"), (b, "todos")] {
            #expect(Self.http("PUT", port: port, "/v1/datasets/\(dataset)/schema", token: token, body: try ServerHarness.schema.canonicalJSON()).status == 201)
        }
        #expect(Self.http("PUT", port: port, "/v1/datasets/wide/schema", token: a, body: try Self.attributes(20_000), timeout: 120).status == 201)
        // Four entries of 8 MiB in A's log.
        let big = String(repeating: "x", count: 8_000_000)
        for n in 1...4 {
            let push = PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("huge", n, title: big, at: Self.now())])
            #expect(Self.http("POST", port: port, "/v1/datasets/huge/push", token: a, body: try JSONEncoder().encode(push), key: "big\(n)").status == 200)
        }
        let baseline = Self.peakMiB(server.process.processIdentifier)

        // The attack runs for 6 s and until B has made its 10 requests (a loaded machine
        // slows B down).
        let attackEnds = ContinuousClock.now + .seconds(6)
        let bDone = NIOLockedValueBox(false)
        let compatible = try Self.attributes(20_000, plus: ["extra"])
        let breaking = try Schema(entities: [
            Schema.Entity(name: "Wide", attributes: (0..<20_000).map { Schema.Attribute(name: "a\($0)", type: .scalar(.int), isOptional: true) })
        ]).canonicalJSON()
        let unknownVersion = try JSONEncoder().encode(PushRequest(schemaVersion: 99, changes: [ServerHarness.insert("huge", 9, at: Self.now())]))
        let attacks = NIOLockedValueBox(0)
        let held = (0..<200).map { _ in SlowClientTests.halfRequest(port: server.port, "POST /v1/datasets/huge/push HTTP/1.1\r\nHost: x\r\nContent-Le") }
        defer { for fd in held where fd >= 0 { close(fd) } }
        do {
            // A: schemas, big pulls, unknown versions, each in a loop on a thread of its own,
            // started at once (a task could wait for a pool thread past the attack's end).
            let finished = NIOLockedValueBox(0)
            for attack in 0..<3 {
                Thread.detachNewThread {
                    var round = 0
                    while ContinuousClock.now < attackEnds || !bDone.withLockedValue({ $0 }) {
                        switch attack {
                        case 0:
                            _ = Self.http("PUT", port: port, "/v1/datasets/wide/schema", token: a, body: round % 2 == 0 ? breaking : compatible, timeout: 120)
                        case 1: _ = Self.http("GET", port: port, "/v1/datasets/huge/pull?limit=100", token: a)
                        default: _ = Self.http("POST", port: port, "/v1/datasets/huge/push", token: a, body: unknownVersion, key: "u\(round)")
                        }
                        round += 1
                        attacks.withLockedValue { $0 += 1 }
                    }
                    finished.withLockedValue { $0 += 1 }
                }
            }
            // B: pushes of 20 changes and pulls, timed.
            let bResults = try await Self.onThread { () -> (latencies: [Duration], failures: [String], pushed: Int) in
                defer { bDone.withLockedValue { $0 = true } }
                var latencies: [Duration] = []
                var failures: [String] = []
                var pushed = 0
                var round = 0
                while ContinuousClock.now < attackEnds || round < 5 {
                    let changes = (0..<20).map { ServerHarness.insert("todos", round * 20 + $0 + 1, title: "b\(round)", at: Self.now()) }
                    let started = ContinuousClock.now
                    let push = Self.http(
                        "POST", port: port, "/v1/datasets/todos/push", token: b, body: try JSONEncoder().encode(PushRequest(schemaVersion: 1, changes: changes)), key: "b\(round)")
                    latencies.append(ContinuousClock.now - started)
                    if push.status == 200 { pushed += 20 } else { failures.append("push \(push.status) \(push.body.prefix(200))") }
                    let pullStarted = ContinuousClock.now
                    let pull = Self.http("GET", port: port, "/v1/datasets/todos/pull?limit=1", token: b)
                    latencies.append(ContinuousClock.now - pullStarted)
                    if pull.status != 200 { failures.append("pull \(pull.status)") }
                    round += 1
                }
                return (latencies, failures, pushed)
            }
            while finished.withLockedValue({ $0 }) < 3 { try await Task.sleep(for: .milliseconds(20)) }

            let sorted = bResults.latencies.sorted()
            try #require(sorted.count >= 10, "B made \(sorted.count) requests")
            let p99 = sorted[min(sorted.count - 1, sorted.count * 99 / 100)]
            #expect(bResults.failures.isEmpty, "\(bResults.failures)")
            #expect(attacks.withLockedValue { $0 } >= 3, "the attack ran")
            #expect(sorted.last! < .seconds(5), "B's slowest request: \(sorted.last!), p99 \(p99), \(sorted.count) requests")
            // B's data is whole: everything it pushed, once, in order.
            let logged = Self.http("GET", port: port, "/v1/datasets/todos/pull?limit=5000", token: b)
            let entries = try JSONDecoder().decode(PullResponse.self, from: Data(logged.body.utf8)).changes
            #expect(entries.count == bResults.pushed)
            #expect(entries.map(\.change.record) == (0..<bResults.pushed).map { ServerHarness.uri("todos", $0 + 1) })
        }
        // Pulls of 8 MiB entries go one entry per page, copied once: the peak stays bounded
        // (before the fix one such pull took the server to 954 MB, two to 3.45 GB).
        let peak = Self.peakMiB(server.process.processIdentifier)
        #expect(peak < 700, "peak RSS \(peak) MiB (before the attack \(baseline) MiB)")
    }
}

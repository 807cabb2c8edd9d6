import Foundation
import Testing
import TandemWire

/// Waiting pulls against the real process: 1 000 clients waiting do not stop others being
/// served, one push wakes them all, and a shutdown ends their waits instead of waiting for
/// them.
@Suite("Waiting pulls (the process)", .serialized)
struct WaitingPullProcessTests {
    @Test func aThousandWaitingPullsDoNotStopOthersAndOnePushWakesThemAll() async throws {
        let dataDir = try ServerProcessTests.temporaryDirectory()
        let token = try ServerProcessTests.setUp(dataDir)
        let server = try ServerProcessTests.startServer(
            dataDir, ["--max-waiting-pulls-per-user", "2000", "--max-pull-wait", "300", "--shutdown-timeout", "120", "--log-level", "critical"],
            descriptors: 1_024)
        defer {
            if server.process.isRunning {
                server.process.terminate()
                server.process.waitUntilExit()
            }
        }
        #expect(try ServerProcessTests.curl("PUT", server.base + "/v1/datasets/todos", token: token).status == 201)
        #expect(
            try ServerProcessTests.curl("PUT", server.base + "/v1/datasets/todos/schema", token: token, body: try ServerHarness.schema.canonicalJSON()).status
                == 201)
        // Held by a child process (see SlowClientTests: Foundation's Process.run and long
        // descriptor lists).
        let (holder, input, reader) = try SlowClientTests.python(Self.waitScript, [String(server.port), token, "1000"])
        defer { if holder.isRunning { holder.terminate() } }
        let sent = try await FairnessProcessTests.onThread { SlowClientTests.line(from: reader) }
        #expect(sent == "sent 1000", "\(sent)")
        // Every one of them is waiting (the server counts them). Bounds here are far from the
        // figures they tell apart (pulls wait 300 s): a loaded machine adds seconds to each.
        let deadline = ContinuousClock.now + .seconds(120)
        var waiting = 0
        while ContinuousClock.now < deadline {
            let metrics = FairnessProcessTests.http("GET", port: server.port, "/metrics", token: token, timeoutMilliseconds: 30_000).body
            waiting = metrics.split(separator: "\n").first { $0.hasPrefix("tandem_pulls_waiting ") }.flatMap { Int(Double($0.split(separator: " ")[1]) ?? -1) } ?? -1
            if waiting == 1_000 { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(waiting == 1_000)
        // Others are served at once meanwhile: health, a pull, a push of another dataset.
        for path in ["/health", "/v1/datasets/todos/pull"] {
            let started = ContinuousClock.now
            #expect(FairnessProcessTests.http("GET", port: server.port, path, token: token, timeoutMilliseconds: 60_000).status == 200)
            #expect(ContinuousClock.now - started < .seconds(30), "\(path) answered while 1 000 pulls wait 300 s")
        }
        let now = ServerHarness.stamp(UInt64(Date().timeIntervalSince1970 * 1000))
        let push = try JSONEncoder().encode(PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("todos", 1, at: now)]))
        let started = ContinuousClock.now
        #expect(
            FairnessProcessTests.http("POST", port: server.port, "/v1/datasets/todos/push", token: token, body: push, key: "k1", timeoutMilliseconds: 60_000).status
                == 200)
        #expect(ContinuousClock.now - started < .seconds(30))
        // That push wakes every waiting pull, each with the new entry.
        let woken = try await FairnessProcessTests.onThread { SlowClientTests.line(from: reader) }
        #expect(woken == "woken 1000", "\(woken)")
        input.fileHandleForWriting.write(Data("again\n".utf8))
        let again = try await FairnessProcessTests.onThread { SlowClientTests.line(from: reader) }
        #expect(again == "sent 1000", "\(again)")
        // SIGTERM ends the waits at once: the server exits well before its shutdown timeout.
        try await Task.sleep(for: .milliseconds(500))
        let stopping = ContinuousClock.now
        server.process.terminate()
        let process = server.process
        while process.isRunning, ContinuousClock.now - stopping < .seconds(180) { try await Task.sleep(for: .milliseconds(20)) }
        #expect(ContinuousClock.now - stopping < .seconds(60), "the waits (300 s, shutdown timeout 120 s) did not hold the shutdown")
        #expect(!process.isRunning && process.terminationStatus == 0)
    }

    /// Sends `count` waiting pulls (`wait=300`, after the start of an empty log) on their own
    /// connections and prints `sent N`; then prints `woken N`: how many answered with a
    /// change. A line on standard input sends `count` more after the last cursor.
    static let waitScript = """
        import json, resource, select, socket, sys
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
        port, token, count = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
        def send_all(after):
            held = []
            for _ in range(count):
                s = socket.create_connection(("127.0.0.1", port))
                s.sendall(("GET /v1/datasets/todos/pull?wait=300&after=%s HTTP/1.1\\r\\nHost: x\\r\\nAuthorization: Bearer %s\\r\\n\\r\\n" % (after, token)).encode())
                held.append(s)
            print("sent", len(held), flush=True)
            return held
        held = send_all("")
        woken, cursor, buffers = 0, "", {s: b"" for s in held}
        open_ = set(held)
        while open_:
            ready, _, _ = select.select(list(open_), [], [], 400)
            if not ready:
                break
            for s in ready:
                data = s.recv(65536)
                buffers[s] += data
                head, sep, body = buffers[s].partition(b"\\r\\n\\r\\n")
                if not data or (sep and b"nextCursor" in body and body.rstrip().endswith(b"}")):
                    open_.discard(s)
                    if b'"record"' in body:
                        woken += 1
                        cursor = json.loads(body)["nextCursor"]
        print("woken", woken, flush=True)
        sys.stdin.readline()
        held = send_all(cursor)
        sys.stdin.readline()
        """
}

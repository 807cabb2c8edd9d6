import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import Testing
@testable import TandemServer
import TandemWire

/// What the dashboard records of sync traffic: bounded, minute by minute, and shown as the
/// clients' own `tandem status` counts it.
@Suite("Client activity")
struct ClientActivityTests {
    /// A clock the test moves.
    final class Clock: Sendable {
        let value = NIOLockedValueBox<Int64>(1_800_000_000_000)
        var now: @Sendable () -> Int64 { { [value] in value.withLockedValue { $0 } } }
        func advance(_ milliseconds: Int64) { value.withLockedValue { $0 += milliseconds } }
    }

    static func client(_ id: String, pending: Int? = nil) -> ClientHeaders { ClientHeaders(id: id, pending: pending) }

    @Test func aUsersClientsAreBoundedAndTheirLeastRecentlySeenGoFirst() {
        let clock = Clock()
        let activity = ClientActivity(now: clock.now)
        for n in 0..<(ClientActivity.maxClientsPerUser + 5) {
            activity.pulled(dataset: 1, owner: 1, client: Self.client("c\(n)"), user: "ann", position: Int64(n), changes: 1)
            clock.advance(1)
        }
        // c5 comes back: kept; the next new id pushes out c6, ann's least recently seen.
        activity.pushed(dataset: 1, owner: 1, client: Self.client("c5"), user: "ann", schemaVersion: 2, changes: 1)
        clock.advance(1)
        activity.pulled(dataset: 1, owner: 1, client: Self.client("new"), user: "ann", position: 1, changes: 1)
        let clients = activity.dataset(1).clients
        #expect(clients.count == ClientActivity.maxClientsPerUser)
        #expect(clients.first?.id == "new")
        #expect(clients.contains { $0.id == "c5" && $0.schemaVersion == 2 && $0.position == 5 })
        #expect(!clients.contains { $0.id == "c0" || $0.id == "c4" || $0.id == "c6" })
    }

    @Test func oneUsersMadeUpIdsPushOutNoOtherUsersClient() {
        let clock = Clock()
        let activity = ClientActivity(now: clock.now)
        activity.pulled(dataset: 1, owner: 1, client: Self.client("phone", pending: 2), user: "bob", position: 7, changes: 1)
        for n in 0..<500 {
            clock.advance(1)
            activity.pulled(dataset: 1, owner: 1, client: Self.client("flood\(n)", pending: 999), user: "mallory", position: 0, changes: 0)
        }
        // The same id from another user is another client: bob's row keeps bob's figures.
        activity.pulled(dataset: 1, owner: 1, client: Self.client("phone", pending: 424_242), user: "mallory", position: 0, changes: 0)
        let clients = activity.dataset(1).clients
        let bobs = clients.filter { $0.user == "bob" }
        #expect(bobs.count == 1 && bobs.first?.pending == 2 && bobs.first?.position == 7)
        #expect(clients.filter { $0.user == "mallory" }.count == ClientActivity.maxClientsPerUser)
        // Many users fill the dataset: then the least recently seen of all goes.
        for user in 0..<10 {
            for n in 0..<ClientActivity.maxClientsPerUser {
                clock.advance(1)
                activity.pulled(dataset: 1, owner: 1, client: Self.client("c\(n)"), user: "user\(user)", position: 0, changes: 0)
            }
        }
        let full = activity.dataset(1).clients
        #expect(full.count == ClientActivity.maxClients)
        #expect(!full.contains { $0.user == "bob" })
    }

    @Test func oneOwnersDatasetsPushOutNoOtherOwnersAndAllAreBounded() {
        let clock = Clock()
        let activity = ClientActivity(now: clock.now)
        activity.pulled(dataset: 99_999, owner: 2, client: Self.client("c"), user: "bob", position: 3, changes: 0)
        for dataset in 0..<Int64(ClientActivity.maxDatasets) {
            clock.advance(1)
            activity.pulled(dataset: dataset, owner: 1, client: Self.client("c"), user: "ann", position: 1, changes: 0)
        }
        #expect(activity.dataset(99_999).clients.first?.position == 3)
        #expect(activity.clientCounts().count == ClientActivity.maxDatasetsPerOwner + 1)
        #expect(activity.activeDatasets(limit: 2) == [Int64(ClientActivity.maxDatasets - 1), Int64(ClientActivity.maxDatasets - 2)])
        // Ten more owners, each with their share: the quietest of all go (owner 2's first).
        for owner in Int64(3)..<13 {
            for n in Int64(0)..<Int64(ClientActivity.maxDatasetsPerOwner) {
                clock.advance(1)
                activity.pulled(dataset: owner * 10_000 + n, owner: owner, client: Self.client("c"), user: "u", position: 1, changes: 0)
            }
        }
        #expect(activity.clientCounts().count == ClientActivity.maxDatasets)
        #expect(activity.dataset(99_999).clients.isEmpty)
    }

    @Test func aWaitingPullEndingLatePutsBackNoOlderPosition() {
        let clock = Clock()
        let activity = ClientActivity(now: clock.now)
        let waitingSince = clock.now()
        clock.advance(5_000)
        // The client's next sync pulled to 9 while its earlier waiting pull still waited.
        activity.pulled(dataset: 1, owner: 1, client: Self.client("phone"), user: "ann", position: 9, changes: 3, requestedAt: clock.now())
        clock.advance(20_000)
        activity.pulled(dataset: 1, owner: 1, client: Self.client("phone"), user: "ann", position: 6, changes: 0, requestedAt: waitingSince)
        #expect(activity.dataset(1).clients.first?.position == 9)
    }

    @Test func refusalsPushOutNoConflictsAndLongTextsAreCut() {
        let clock = Clock()
        let activity = ClientActivity(now: clock.now)
        activity.event(dataset: 1, owner: 1, client: nil, user: "ann", kind: .conflict, text: "the conflict")
        for n in 0..<30 {
            clock.advance(1)
            activity.event(dataset: 1, owner: 1, client: nil, user: "mallory", kind: .refused, text: "refusal \(n) " + String(repeating: "x", count: 1000))
        }
        let events = activity.dataset(1).events
        #expect(events.count == ClientActivity.maxEvents + 1)
        #expect(events.contains { $0.kind == .conflict && $0.text == "the conflict" })
        #expect(events.first?.text.hasPrefix("refusal 29 ") == true)
        #expect(events.allSatisfy { $0.text.count <= 300 })
    }

    @Test func theHourHasEveryMinuteOldestFirstAndForgetsOlderOnes() {
        let clock = Clock()
        let activity = ClientActivity(now: clock.now)
        activity.pushed(dataset: 1, owner: 1, client: nil, user: "ann", schemaVersion: 1, changes: 4)
        clock.advance(60_000 * 10)
        activity.pulled(dataset: 1, owner: 1, client: nil, user: "ann", position: 1, changes: 7)
        activity.pulled(dataset: 1, owner: 1, client: nil, user: "ann", position: 1, changes: 1)
        var minutes = activity.dataset(1).minutes
        #expect(minutes.count == ClientActivity.minutes)
        #expect(minutes.last?.pulls == 2 && minutes.last?.changesPulled == 8)
        #expect(minutes[minutes.count - 11].pushes == 1 && minutes[minutes.count - 11].changesPushed == 4)
        #expect(minutes.reduce(0) { $0 + $1.pushes + $1.pulls } == 3)
        #expect(zip(minutes, minutes.dropFirst()).allSatisfy { $0.minute + 1 == $1.minute })
        // An hour later nothing of it is left; a client without an id is in no client list.
        clock.advance(60_000 * 60)
        minutes = activity.dataset(1).minutes
        #expect(minutes.count == ClientActivity.minutes && minutes.allSatisfy { $0.pushes == 0 && $0.pulls == 0 })
        #expect(activity.dataset(1).clients.isEmpty)
    }

    @Test func aClientUnseenForAWeekIsLeftOut() {
        let clock = Clock()
        let activity = ClientActivity(now: clock.now)
        activity.pulled(dataset: 1, owner: 1, client: Self.client("old", pending: 2), user: "ann", position: 1, changes: 0)
        clock.advance(ClientActivity.clientRetention - 1000)
        activity.pulled(dataset: 1, owner: 1, client: Self.client("new"), user: "bob", position: 1, changes: 0)
        #expect(activity.dataset(1).clients.map(\.id) == ["new", "old"])
        #expect(activity.dataset(1).clients.last?.pending == 2)
        clock.advance(2000)
        #expect(activity.dataset(1).clients.map(\.id) == ["new"])
    }

    @Test func answersAreCountedByStatusClass() {
        let clock = Clock()
        let activity = ClientActivity(now: clock.now)
        for status in [200, 200, 404, 409, 500, 503] { activity.answered(status: status) }
        clock.advance(60_000)
        activity.answered(status: 201)
        let minutes = activity.requestMinutes()
        #expect(minutes.count == ClientActivity.minutes)
        #expect(minutes[minutes.count - 2] == ClientActivity.RequestMinute(minute: minutes[minutes.count - 2].minute, requests: 6, refused: 2, failed: 2))
        #expect(minutes.last?.requests == 1 && minutes.last?.refused == 0)
    }

    // MARK: Through the router

    static let clientHeader = HTTPField.Name("Tandem-Client")!
    static let pendingHeader = HTTPField.Name("Tandem-Pending")!

    static func headers(_ client: String?, pending: String? = nil, key: String? = nil) -> HTTPFields {
        var headers = HTTPFields()
        if let client { headers[clientHeader] = client }
        if let pending { headers[pendingHeader] = pending }
        if let key { headers[HTTPField.Name("Idempotency-Key")!] = key }
        return headers
    }

    @Test(arguments: StorageKind.allCases)
    func theDashboardShowsClientsTheirLagPendingChangesAndConflicts(kind: StorageKind) async throws {
        let harness = try await AdminRoutesTests.harness(kind)
        try await harness.run { client in
            let push = { (changes: [WireChange], id: String, key: String) in
                try await client.json(
                    .post, "/v1/datasets/todos/push", token: harness.ann, PushRequest(schemaVersion: 1, changes: changes), headers: Self.headers(id, key: key))
            }
            #expect(try await push([ServerHarness.insert("todos", 1), ServerHarness.insert("todos", 2)], "phone-1", "a").status == .ok)
            // An older title loses: a conflict.
            let older = ServerHarness.stamp(1_700_000_000_000)
            let stale = WireChange(record: ServerHarness.uri("todos", 1), entity: "Todo", kind: .update, values: ["title": .text("stale")], stamps: ["title": older])
            #expect(try await push([stale], "laptop_2", "b").status == .ok)
            // A refused push: an entity the schema does not have.
            let unknown = WireChange(record: "tandem://todos/Nope/1", entity: "Nope", kind: .insert, values: [:], stamps: ["*": ServerHarness.stamp()])
            #expect(try await push([unknown], "laptop_2", "c").status.code >= 400)
            // phone-1 pulls one entry and says it has 3 pending changes.
            let page = try await client.send(.get, "/v1/datasets/todos/pull?limit=1", token: harness.ann, headers: Self.headers("phone-1", pending: "3"))
            #expect(page.status == .ok)
            let head = try await client.send(.get, "/v1/datasets/todos/lag", token: harness.ann).decode(DatasetLag.self)
            let cursor = try page.decode(PullResponse.self).nextCursor
            let lag = try await client.send(.get, "/v1/datasets/todos/lag?after=\(cursor)", token: harness.ann).decode(DatasetLag.self)
            #expect(lag.behind == head.behind - 1 && lag.behind > 0)

            let html = AdminRoutesTests.text(try await client.send(.get, "/admin", token: harness.ann))
            let phone = try #require(Self.row(of: "phone-1", in: html))
            #expect(phone.contains(#"<td class="n">\#(lag.behind)</td><td class="n">3</td><td class="n">1</td>"#))
            let laptop = try #require(Self.row(of: "laptop_2", in: html))
            #expect(laptop.contains("<td>—</td>"))  // never pulled
            #expect(html.contains("Schema versions clients pushed with: v1: 2 clients"))
            #expect(html.contains("<td>conflict</td><td><code>laptop_2</code></td><td>ann</td><td>1 value lost: Todo/00000000-0000-0000-0000-000000000001 title (to a newer value)</td>"))
            #expect(html.contains("<td>refused</td><td><code>laptop_2</code></td>"))
            #expect(html.contains(#"<svg class="chart""#) && html.contains("3 pushes, 1 pulls"))
            // bob's dataset had no client traffic: no section of its own.
            #expect(!html.contains("<h3>bob/groceries</h3>"))
            #expect(html.contains("<h3>ann/todos</h3>"))
        }
    }

    /// The `<tr>` of the client `id` in the page.
    static func row(of id: String, in html: String) -> String? {
        guard let start = html.range(of: "<tr><td><code>\(id)</code></td>") else { return nil }
        return html[start.lowerBound...].components(separatedBy: "</tr>").first
    }

    @Test(arguments: StorageKind.allCases)
    func badClientHeadersAreRefusedAndChangeNothing(kind: StorageKind) async throws {
        let harness = try await ServerHarness.make(kind)
        try await harness.run { client in
            try await client.setUp("todos", token: harness.ann)
            let bad: [(String?, String?)] = [
                ("has space", nil), (String(repeating: "a", count: 65), nil), ("", nil), ("ünï", nil), ("ok", "-1"), ("ok", "many"), (nil, "2"),
            ]
            for (id, pending) in bad {
                for path in ["/v1/datasets/todos/pull", "/v1/datasets/todos/snapshot"] {
                    let reply = try await client.send(.get, path, token: harness.ann, headers: Self.headers(id, pending: pending))
                    #expect(reply.status == .badRequest && reply.errorCode == "invalid_client", "\(path) \(id ?? "-") \(pending ?? "-")")
                }
                let push = try await client.json(
                    .post, "/v1/datasets/todos/push", token: harness.ann, PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("todos", 1)]),
                    headers: Self.headers(id, pending: pending, key: "k"))
                #expect(push.status == .badRequest && push.errorCode == "invalid_client")
            }
            #expect(try await client.send(.get, "/v1/datasets/todos/lag", token: harness.ann).decode(DatasetLag.self).behind == 0)
            let ann = try #require(try await harness.storage.user(named: "ann"))
            let id = try #require(try await harness.storage.datasetID(owner: ann.id, name: "todos"))
            #expect(harness.dependencies.activity.dataset(id).clients.isEmpty)
            #expect(harness.dependencies.activity.dataset(id).events.isEmpty)
        }
    }

    @Test(arguments: StorageKind.allCases)
    func lagRefusesCursorsItCannotCount(kind: StorageKind) async throws {
        let harness = try await ServerHarness.make(kind)
        try await harness.run { client in
            try await client.setUp("todos", token: harness.ann)
            try await client.setUp("other", token: harness.ann)
            let empty = try await client.send(.get, "/v1/datasets/todos/lag", token: harness.ann)
            #expect(try empty.decode(DatasetLag.self) == DatasetLag(behind: 0, head: "", serverTime: 1_800_000_000_000))
            #expect(try await client.push("other", token: harness.ann, key: "o", PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("other", 1)])).status == .ok)
            let otherCursor = try await client.pull("other", token: harness.ann, limit: 10).nextCursor
            let wrong = try await client.send(.get, "/v1/datasets/todos/lag?after=\(otherCursor)", token: harness.ann)
            #expect(wrong.status == .conflict && wrong.errorCode == "cursor_other_dataset")
            let garbage = try await client.send(.get, "/v1/datasets/todos/lag?after=nope", token: harness.ann)
            #expect(garbage.status == .badRequest && garbage.errorCode == "invalid_cursor")
            let stranger = try await client.send(.get, "/v1/datasets/todos/lag", token: harness.bob)
            #expect(stranger.status == .notFound || stranger.status == .forbidden)
            let post = try await client.send(.post, "/v1/datasets/todos/lag", token: harness.ann)
            #expect(post.status == .methodNotAllowed)
        }
    }

    @Test func theChartIsDrawnFromNumbersAndEscapesItsTitle() {
        let chart = ActivityChart(title: "a <b> & \"c\"", series: [.init(name: "pushes", color: "#0a7", values: [0, 5, 10])]).svg
        #expect(chart.contains("<title>a &lt;b&gt; &amp; &quot;c&quot;: 15 pushes</title>"))
        #expect(chart.contains(#"points="1,70 180,41 359,12""#))
        #expect(chart.contains("10 / min"))
    }
}

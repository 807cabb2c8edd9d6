import Foundation
import Tandem
import TandemCurl
import TandemSync
import TandemSyncTestSupport
import Testing

/// The operator's dashboard of a real `tandem-server` and each client's own status agree:
/// the pending changes `tandem status` counts and the lag `tandem status --server` asks for
/// are the figures the dashboard lists for that client's id.
@Suite("Dashboard and status (the processes)", .serialized)
struct DashboardProcessTests {
    @Test func theDashboardShowsThePendingAndBehindFiguresOfEachClientsStatus() async throws {
        let server = try await SyncServerProcess.make()
        let executable = try #require(SyncServerProcess.executable)
        let dir = server.dataDir.path(percentEncoded: false)
        func token(_ user: String, operator: Bool = false) throws -> String {
            try SyncServerProcess.run(executable, ["users", "add", user, "--data-dir", dir] + (`operator` ? ["--operator"] : []))
            return try SyncServerProcess.run(executable, ["tokens", "create", user, "--data-dir", dir]).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let (ops, bob) = (try token("ops", operator: true), try token("bob"))
        let transport = try CurlTransport(baseURL: server.base)
        let (ann, reader) = (try SyncFixtures.store(), try SyncFixtures.store())
        let annEngine = SyncEngine(container: ann, transport: transport, configuration: SyncConfiguration(token: { server.token }))
        let bobEngine = SyncEngine(container: reader, transport: transport, configuration: SyncConfiguration(dataset: "ann/todos", token: { bob }))
        try SyncFixtures.insert(ann, 1, title: "one")
        try SyncFixtures.insert(ann, 2, title: "two")
        #expect(try await annEngine.sync().isComplete)
        try SyncServerProcess.run(executable, ["datasets", "share", "ann/todos", "--with", "bob", "--role", "reader", "--data-dir", dir])
        // bob's edit is refused (a reader): it stays pending, and his pull says so.
        try SyncFixtures.insert(reader, 9, title: "bob's")
        #expect(try await bobEngine.sync().quarantined == 1)
        // ann writes after bob's pull: bob is behind.
        try SyncFixtures.insert(ann, 3, title: "three")
        try SyncFixtures.insert(ann, 4, title: "four")
        #expect(try await annEngine.sync().isComplete)

        let page = try await transport.send(TransportRequest(method: "GET", path: "/admin", headers: ["Authorization": "Bearer \(ops)"]))
        #expect(page.status == 200)
        let html = String(decoding: page.body, as: UTF8.self)
        for (name, container, engine) in [("ann", ann, annEngine), ("bob", reader, bobEngine)] {
            let pending = try SyncStatus(of: container).pendingChanges
            let behind = try #require(try await engine.lag()).behind
            let cells = try #require(Self.cells(of: engine.clientID, in: html), "\(name)'s client \(engine.clientID) is not on the dashboard")
            // Client, User, Last push, Last pull, Behind, Pending, Schema version
            #expect(cells[1] == name)
            #expect(cells[4] == String(behind), "\(name): the dashboard says \(cells[4]) behind, the server's lag \(behind)")
            #expect(cells[5] == String(pending), "\(name): the dashboard says \(cells[5]) pending, the store \(pending)")
            if name == "bob" {
                #expect(pending == 1 && behind > 0, "bob has his refused edit pending and ann's last two records to pull")
                #expect(cells[2] == "—", "a reader's push is refused: no push recorded")
            } else {
                #expect(pending == 0 && behind == 0)
            }
        }
        #expect(html.contains("<td>refused</td><td><code>\(bobEngine.clientID)</code></td><td>bob</td>"))
    }

    /// The cells of the dashboard's row for client `id`, their text.
    static func cells(of id: String, in html: String) -> [String]? {
        guard let start = html.range(of: "<tr><td><code>\(id)</code></td>") else { return nil }
        let row = html[start.lowerBound...].components(separatedBy: "</tr>")[0]
        return row.components(separatedBy: "<td").dropFirst().map { cell in
            let content = cell.drop { $0 != ">" }.dropFirst()
            return String(content.prefix { $0 != "<" } == "" ? content.dropFirst("<code>".count).prefix { $0 != "<" } : content.prefix { $0 != "<" })
        }
    }
}

import Foundation
import Mustache
import TandemWire

/// The operator's dashboard (`GET /admin`): what it shows, gathered from the storage, and its
/// HTML, rendered on the server from a Mustache template (values escaped by it) with a little
/// CSS and no script.
///
/// ```swift
/// let html = try await DashboardPage.gather(dependencies, operator: user, formToken: nil, startedAt: start).html
/// ```
struct DashboardPage {
    struct DatasetRow {
        var owner: String
        var name: String
        var members: String
        var records: Int
        var logHead: Int64
        var keptEntries: Int64
        var compactedThrough: Int64
        var stored: String
        var schemaVersions: String
        /// Clients this node saw pull or push it (``ClientActivity``).
        var clients: Int
    }

    /// One dataset's sync traffic as this node saw it: shown for datasets with any.
    struct ActivitySection {
        var owner: String
        var name: String
        var clients: [ClientRow]
        /// "v2: 3 clients, v1: 1 client": the schema versions clients last pushed with.
        var clientVersions: String
        /// Clients left out (the section lists the ``shownClients`` most recently seen).
        var moreClients: Int?
        var events: [EventRow]
        var chart: String
    }

    struct ClientRow {
        var id: String
        var user: String
        var lastPush: String
        var lastPull: String
        /// Log entries after its cursor (the log head minus its last pull's position), as
        /// `tandem status --server` shows it.
        var behind: String
        var pending: String
        var schemaVersion: String
    }

    struct EventRow {
        var at: String
        var kind: String
        var client: String
        var user: String
        var text: String
    }

    struct UserRow {
        var name: String
        var role: String
        var datasets: Int
        var shared: Int
        var tokens: Int
        var stored: String
        var limit: String
    }

    var operatorName: String
    /// The session's form token: the sign-out form is shown to a signed-in browser only.
    var formToken: String?
    var generatedAt: String
    var uptime: String
    var storage: String
    /// This node: its host name and process id.
    var node: String
    /// This node's answers over the last hour, and the chart of them.
    var requests: String
    var requestsChart: String
    var userCount: Int
    var datasetCount: Int
    var storedBytes: String
    var datasets: [DatasetRow]
    /// Datasets left out (the page shows the first ``shownDatasets``); `nil` for none (a
    /// Mustache section shows for any number, 0 included).
    var moreDatasets: Int?
    var users: [UserRow]
    var activity: [ActivitySection]

    /// The most datasets one page lists (each costs two reads).
    static let shownDatasets = 200
    /// The most datasets with sync activity the page shows (the most recently active), and
    /// the most clients it lists of each (the most recently seen).
    static let shownActivity = 50
    static let shownClients = 20

    /// Gathers the page's figures.
    ///
    /// - Throws: what the storage throws.
    static func gather(_ dependencies: ServerDependencies, operator user: ServerUser, formToken: String?, startedAt: Int64) async throws -> DashboardPage {
        let storage = dependencies.storage
        let now = dependencies.now()
        let overviews = try await storage.datasetOverviews()
        var rows: [DatasetRow] = []
        let clientCounts = dependencies.activity.clientCounts()
        for dataset in overviews.prefix(shownDatasets) {
            let members = try await storage.members(dataset: dataset.id)
            let versions = try await storage.schemaHistory(dataset: dataset.id)
            rows.append(
                DatasetRow(
                    owner: dataset.owner, name: dataset.name,
                    members: members.isEmpty ? "—" : members.map { "\($0.user) (\($0.role.rawValue))" }.joined(separator: ", "),
                    records: dataset.records, logHead: dataset.logHead, keptEntries: max(dataset.logHead - dataset.compactedThrough, 0),
                    compactedThrough: dataset.compactedThrough, stored: bytes(dataset.storedBytes),
                    schemaVersions: versions.isEmpty ? "—" : versions.map { String($0.version) }.joined(separator: ", "), clients: clientCounts[dataset.id] ?? 0))
        }
        // The most recently active datasets, whether or not the table above lists them (a
        // deleted one is left out).
        let byID = Dictionary(overviews.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let sections = dependencies.activity.activeDatasets(limit: shownActivity).compactMap { id in
            byID[id].map { section($0, dependencies.activity.dataset(id), now: now) }
        }
        let limits = ServerUser(id: 0, name: "").quota.limits(dependencies.configuration)
        var users: [UserRow] = []
        for summary in try await storage.users(now: now) {
            let quota = summary.user.quota.limits(dependencies.configuration)
            users.append(
                UserRow(
                    name: summary.user.name, role: summary.user.isOperator ? "operator" : "user", datasets: summary.datasets, shared: summary.memberships,
                    tokens: summary.tokens, stored: bytes(try await storage.storedBytes(owner: summary.user.id)),
                    limit: "\(bytes(quota.bytes)), \(quota.datasets) datasets" + (quota == limits ? " (default)" : "")))
        }
        let minutes = dependencies.activity.requestMinutes()
        let (answered, refused, failed) = minutes.reduce((0, 0, 0)) { ($0.0 + $1.requests, $0.1 + $1.refused, $0.2 + $1.failed) }
        let requestsChart = ActivityChart(
            title: "Requests this node answered, last hour",
            series: [
                .init(name: "answers", color: "#36c", values: minutes.map(\.requests)),
                .init(name: "4xx", color: "#c80", values: minutes.map(\.refused)),
                .init(name: "5xx", color: "#c00", values: minutes.map(\.failed)),
            ])
        return DashboardPage(
            operatorName: user.name, formToken: formToken, generatedAt: Date(timeIntervalSince1970: Double(now) / 1000).formatted(.iso8601),
            uptime: duration(now - startedAt), storage: storageKind(storage), node: node,
            requests: "\(answered) answers, \(refused) refused (4xx), \(failed) failed (5xx)", requestsChart: requestsChart.svg, userCount: users.count, datasetCount: overviews.count,
            storedBytes: bytes(overviews.reduce(0) { $0 + $1.storedBytes }), datasets: rows, moreDatasets: overviews.count > rows.count ? overviews.count - rows.count : nil,
            users: users, activity: sections)
    }

    /// A dataset's clients, the versions they pushed with, its recent events and its chart.
    static func section(_ dataset: DatasetOverview, _ activity: ClientActivity.DatasetActivity, now: Int64) -> ActivitySection {
        func ago(_ at: Int64?) -> String { at.map { duration(now - $0) + " ago" } ?? "—" }
        let clients = activity.clients.prefix(shownClients).map { client in
            ClientRow(
                id: client.id, user: client.user, lastPush: ago(client.lastPush), lastPull: ago(client.lastPull),
                behind: client.position.map { String(max(dataset.logHead - $0, 0)) } ?? "—", pending: client.pending.map(String.init) ?? "—",
                schemaVersion: client.schemaVersion.map(String.init) ?? "—")
        }
        var perVersion: [Int: Int] = [:]
        for client in activity.clients { if let version = client.schemaVersion { perVersion[version, default: 0] += 1 } }
        let versions = perVersion.sorted { $0.key > $1.key }.map { "v\($0.key): \($0.value) client\($0.value == 1 ? "" : "s")" }
        let chart = ActivityChart(
            title: "Pushes and pulls of \(dataset.owner)/\(dataset.name), last hour",
            series: [
                .init(name: "pushes", color: "#0a7", values: activity.minutes.map(\.pushes)),
                .init(name: "pulls", color: "#36c", values: activity.minutes.map(\.pulls)),
            ])
        return ActivitySection(
            owner: dataset.owner, name: dataset.name, clients: Array(clients), clientVersions: versions.isEmpty ? "—" : versions.joined(separator: ", "),
            moreClients: activity.clients.count > shownClients ? activity.clients.count - shownClients : nil,
            events: activity.events.map { EventRow(at: ago($0.at), kind: $0.kind.rawValue, client: $0.client ?? "—", user: $0.user, text: $0.text) },
            chart: chart.svg)
    }

    /// This node: `host (pid 123)`.
    static let node: String = {
        var buffer = [CChar](repeating: 0, count: 256)
        let host = gethostname(&buffer, buffer.count - 1) == 0 ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "?"
        return "\(host) (pid \(ProcessInfo.processInfo.processIdentifier))"
    }()

    static func storageKind(_ storage: any ServerStorage) -> String {
        switch storage {
        case is SQLiteServerStorage: "SQLite (one node)"
        case is MemoryServerStorage: "in memory (tests)"
        default: "PostgreSQL (any number of nodes; this page shows the clients and requests of the node that answered it)"
        }
    }

    /// `1.5 MiB`, `320 B`.
    static func bytes(_ count: Int64) -> String {
        guard count >= 1024 else { return "\(count) B" }
        var value = Double(count)
        for unit in ["KiB", "MiB", "GiB", "TiB"] {
            value /= 1024
            if value < 1024 || unit == "TiB" { return String(format: "%.1f %@", value, unit) }
        }
        return "\(count) B"
    }

    /// `3 d 4 h`, `5 min`.
    static func duration(_ milliseconds: Int64) -> String {
        let seconds = max(milliseconds / 1000, 0)
        if seconds < 60 { return "\(seconds) s" }
        if seconds < 3600 { return "\(seconds / 60) min" }
        if seconds < 86400 { return "\(seconds / 3600) h \(seconds % 3600 / 60) min" }
        return "\(seconds / 86400) d \(seconds % 86400 / 3600) h"
    }

    var html: String { Self.template.render(self) }

    static let template: MustacheTemplate = {
        // The template is fixed text: it parses, or no test passes.
        try! MustacheTemplate(string: DashboardTemplates.dashboard)  // swiftlint:disable:this force_try
    }()
}

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
    var userCount: Int
    var datasetCount: Int
    var storedBytes: String
    var datasets: [DatasetRow]
    /// Datasets left out (the page shows the first ``shownDatasets``); `nil` for none (a
    /// Mustache section shows for any number, 0 included).
    var moreDatasets: Int?
    var users: [UserRow]

    /// The most datasets one page lists (each costs two reads).
    static let shownDatasets = 200

    /// Gathers the page's figures.
    ///
    /// - Throws: what the storage throws.
    static func gather(_ dependencies: ServerDependencies, operator user: ServerUser, formToken: String?, startedAt: Int64) async throws -> DashboardPage {
        let storage = dependencies.storage
        let now = dependencies.now()
        let overviews = try await storage.datasetOverviews()
        var rows: [DatasetRow] = []
        for dataset in overviews.prefix(shownDatasets) {
            let members = try await storage.members(dataset: dataset.id)
            let versions = try await storage.schemaHistory(dataset: dataset.id)
            rows.append(
                DatasetRow(
                    owner: dataset.owner, name: dataset.name,
                    members: members.isEmpty ? "—" : members.map { "\($0.user) (\($0.role.rawValue))" }.joined(separator: ", "),
                    records: dataset.records, logHead: dataset.logHead, keptEntries: max(dataset.logHead - dataset.compactedThrough, 0),
                    compactedThrough: dataset.compactedThrough, stored: bytes(dataset.storedBytes),
                    schemaVersions: versions.isEmpty ? "—" : versions.map { String($0.version) }.joined(separator: ", ")))
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
        return DashboardPage(
            operatorName: user.name, formToken: formToken, generatedAt: Date(timeIntervalSince1970: Double(now) / 1000).formatted(.iso8601),
            uptime: duration(now - startedAt), storage: storageKind(storage), userCount: users.count, datasetCount: overviews.count,
            storedBytes: bytes(overviews.reduce(0) { $0 + $1.storedBytes }), datasets: rows, moreDatasets: overviews.count > rows.count ? overviews.count - rows.count : nil,
            users: users)
    }

    static func storageKind(_ storage: any ServerStorage) -> String {
        switch storage {
        case is SQLiteServerStorage: "SQLite (one node)"
        case is MemoryServerStorage: "in memory (tests)"
        default: "PostgreSQL"
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

import ArgumentParser
import Foundation
import TandemServer

extension Users {
    /// `tandem-server users quota NAME [--datasets N] [--schema-versions N] [--bytes N]`:
    /// shows a user's limits and use, and sets their own limits (`default` goes back to the
    /// server's). A running server applies a change on the user's next request.
    struct Quota: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show a user's quota and use; set their own limits (a number, or 'default' for the server's).",
            discussion: """
                Examples:
                  tandem-server users quota ann
                  tandem-server users quota ann --datasets 20 --bytes 50G
                  tandem-server users quota ann --bytes default
                Sizes take K, M, G or T (powers of 1024). A running server applies the change on the user's next request.
                """)
        @OptionGroup var data: DataOptions
        @Argument(help: "The user name.") var name: String
        @Option(help: "Datasets the user may create (or 'default').") var datasets: Limit?
        @Option(help: "Schema versions each of the user's datasets may register (or 'default').") var schemaVersions: Limit?
        @Option(help: "Bytes of changes the user's datasets may hold, e.g. 500M or 20G (or 'default').") var bytes: Limit?

        func run() async throws {
            let storage = try await data.storage()
            guard var user = try await storage.user(named: name) else {
                throw ValidationError("no user '\(name)': add it with tandem-server users add \(name)")
            }
            if datasets != nil || schemaVersions != nil || bytes != nil {
                var quota = user.quota
                if let datasets { quota.datasets = datasets.value.map { Int($0) } }
                if let schemaVersions { quota.schemaVersions = schemaVersions.value.map { Int($0) } }
                if let bytes { quota.bytes = bytes.value }
                try await storage.setQuota(user: user.id, quota)
                user.quota = quota
            }
            let defaults = ServerConfiguration()
            func limit<T>(_ own: T?, _ server: T, _ option: String) -> String {
                own.map { "\($0) (own limit)" } ?? "\(server) (server default, unless serve sets \(option))"
            }
            let used = try await storage.datasets(owner: user.id).count
            let stored = try await storage.storedBytes(owner: user.id)
            print(
                """
                user \(user.name)
                  datasets:        \(used) of \(limit(user.quota.datasets, defaults.maxDatasetsPerUser, "--max-datasets-per-user"))
                  schema versions: at most \(limit(user.quota.schemaVersions, defaults.maxSchemaVersions, "--max-schema-versions")) per dataset
                  bytes:           \(stored) of \(limit(user.quota.bytes, defaults.maxBytesPerUser, "--max-bytes-per-user"))
                """)
        }
    }

    /// A limit on the command line: a ``ByteCount`` (a whole number, with K, M, G or T for
    /// powers of 1024), or `default` (`value` is `nil`: the server's default).
    struct Limit: ExpressibleByArgument {
        var value: Int64?

        init?(argument: String) {
            if argument.trimmingCharacters(in: .whitespaces).lowercased() == "default" {
                value = nil
                return
            }
            guard let count = ByteCount(argument: argument) else { return nil }
            value = count.value
        }

        static var defaultValueDescription: String { "N" }
    }
}

import ArgumentParser
import Foundation
import TandemServer

extension Users {
    /// `tandem-server users list`: every user, with what they own and hold.
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the users: datasets owned, datasets shared with them, live tokens, quota.")
        @OptionGroup var data: DataOptions

        func run() async throws {
            print(["USER", "CREATED", "DATASETS", "SHARED", "TOKENS", "QUOTA", "ROLE"].joined(separator: "\t"))
            for summary in try await data.storage().users(now: Int64(Date().timeIntervalSince1970 * 1000)) {
                let quota = summary.user.quota
                let limits = [
                    quota.datasets.map { "datasets=\($0)" }, quota.schemaVersions.map { "schema-versions=\($0)" }, quota.bytes.map { "bytes=\($0)" },
                ].compactMap { $0 }
                print(
                    [
                        summary.user.name, Self.date(summary.createdAt), String(summary.datasets), String(summary.memberships), String(summary.tokens),
                        limits.isEmpty ? "default" : limits.joined(separator: ","), summary.user.isOperator ? "operator" : "user",
                    ].joined(separator: "\t"))
            }
        }

        /// A time in milliseconds since 1970 as ISO 8601 (UTC).
        static func date(_ milliseconds: Int64) -> String {
            Date(timeIntervalSince1970: Double(milliseconds) / 1000).formatted(.iso8601)
        }
    }

    /// `tandem-server users remove NAME [--delete-datasets]`.
    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a user, their tokens and memberships; refused while they own datasets, unless --delete-datasets.",
            discussion: """
                Their tokens stop working at once. With --delete-datasets, the datasets they own are deleted too
                (as tandem-server datasets delete does): members' replicas keep what they hold and receive nothing new.
                """)
        @OptionGroup var data: DataOptions
        @Argument(help: "The user name.") var name: String
        @Flag(help: "Also delete the datasets the user owns.") var deleteDatasets = false

        func run() async throws {
            let storage = try await data.storage()
            guard let user = try await storage.user(named: name) else { throw ValidationError("no user '\(name)'") }
            let owned = try await storage.datasets(owner: user.id)
            if !owned.isEmpty {
                guard deleteDatasets else {
                    throw ValidationError(
                        "'\(name)' owns \(owned.map { "\(name)/\($0.name)" }.joined(separator: ", ")): delete them first (tandem-server datasets delete), or pass --delete-datasets")
                }
                for dataset in owned {
                    if let id = try await storage.datasetID(owner: user.id, name: dataset.name) { try await Datasets.delete(id, in: storage) }
                    print("dataset \(name)/\(dataset.name) deleted")
                }
            }
            do {
                try await storage.removeUser(id: user.id)
            } catch let error as StorageError {
                throw ValidationError(error.description)
            }
            print("user \(name) removed")
        }
    }
}

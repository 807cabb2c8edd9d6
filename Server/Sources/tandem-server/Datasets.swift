import ArgumentParser
import Foundation
import TandemServer
import TandemWire

/// `tandem-server datasets share|unshare|members|delete OWNER/NAME`: an operator manages who
/// reaches a dataset (its admins do the same over HTTP), and deletes one.
struct Datasets: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Manage who reaches a dataset; delete one.", subcommands: [Share.self, Unshare.self, Members.self, Delete.self])

    /// Deletes a dataset and purges its data, in short steps.
    static func delete(_ id: Int64, in storage: any ServerStorage) async throws {
        guard try await storage.deleteDataset(id: id) else { return }
        try await storage.purgeDeletedDatasets()
    }

    /// The dataset `OWNER/NAME` names, its owner and id.
    static func dataset(_ text: String, in storage: any ServerStorage) async throws -> (reference: DatasetReference, owner: ServerUser, id: Int64) {
        guard let reference = DatasetReference(text), let ownerName = reference.owner else {
            throw ValidationError("'\(text)' is not OWNER/NAME (a user name and a dataset name: letters, digits, '-', '_' or '.')")
        }
        guard let owner = try await storage.user(named: ownerName) else { throw ValidationError("no user '\(ownerName)'") }
        guard let id = try await storage.datasetID(owner: owner.id, name: reference.name) else {
            throw ValidationError("'\(ownerName)' has no dataset '\(reference.name)' (a client's first sync creates it)")
        }
        return (reference, owner, id)
    }

    struct Share: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a user a member of a dataset (or change their role): reader pulls; writer also pushes and registers compatible schema versions; admin also manages members.")
        @OptionGroup var data: DataOptions
        @Argument(help: "The dataset, OWNER/NAME.") var dataset: String
        @Option(help: "The user to share it with.") var with: String
        @Option(help: "reader, writer or admin.") var role: String

        func run() async throws {
            guard let role = DatasetRole(rawValue: role) else { throw ValidationError("--role is reader, writer or admin, not '\(role)'") }
            let storage = try await data.storage()
            let (reference, owner, id) = try await Datasets.dataset(dataset, in: storage)
            guard let user = try await storage.user(named: with) else { throw ValidationError("no user '\(with)': add it with tandem-server users add \(with)") }
            guard user.id != owner.id else { throw ValidationError("'\(with)' owns \(reference): an admin for good") }
            try await storage.setMember(dataset: id, user: user.id, role: role, now: Int64(Date().timeIntervalSince1970 * 1000))
            print("\(with) is \(role == .admin ? "an" : "a") \(role.rawValue) of \(reference); their client syncs it with --dataset \(reference) (a store made with --dataset \(reference.name))")
        }
    }

    struct Unshare: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a member: their next request is refused (404 not_shared). What their replica holds stays on their device; they receive nothing new.")
        @OptionGroup var data: DataOptions
        @Argument(help: "The dataset, OWNER/NAME.") var dataset: String
        @Option(help: "The member to remove.") var with: String

        func run() async throws {
            let storage = try await data.storage()
            let (reference, owner, id) = try await Datasets.dataset(dataset, in: storage)
            guard with != owner.name else { throw ValidationError("'\(with)' owns \(reference): an admin for good, who cannot be removed") }
            guard let user = try await storage.user(named: with), try await storage.removeMember(dataset: id, user: user.id) else {
                throw ValidationError("'\(with)' is not a member of \(reference)")
            }
            print("\(with) removed from \(reference)")
        }
    }

    struct Members: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List a dataset's owner and members.")
        @OptionGroup var data: DataOptions
        @Argument(help: "The dataset, OWNER/NAME.") var dataset: String

        func run() async throws {
            let storage = try await data.storage()
            let (_, owner, id) = try await Datasets.dataset(dataset, in: storage)
            print("\(owner.name)\towner")
            for member in try await storage.members(dataset: id) { print("\(member.user)\t\(member.role.rawValue)") }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a dataset: its records, log, schema versions and members.",
            discussion: """
                Every client's next request on it is refused (404). Replicas keep what they hold and receive nothing new;
                an owner's client that syncs again makes a new, empty dataset of the name and pushes its whole store into it.
                """)
        @OptionGroup var data: DataOptions
        @Argument(help: "The dataset, OWNER/NAME.") var dataset: String

        func run() async throws {
            let storage = try await data.storage()
            let (reference, _, id) = try await Datasets.dataset(dataset, in: storage)
            try await Datasets.delete(id, in: storage)
            print("dataset \(reference) deleted")
        }
    }
}

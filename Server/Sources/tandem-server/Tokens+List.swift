import ArgumentParser
import Foundation
import TandemServer

extension Tokens {
    /// `tandem-server tokens list [--user NAME]`: ids, owners, scopes and states, never secrets.
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List tokens (never their secrets): id, user, scope, expiry, state.")
        @OptionGroup var data: DataOptions
        @Option(help: "Only this user's tokens.") var user: String?

        func run() async throws {
            let storage = try await data.storage()
            var id: Int64?
            if let user {
                guard let found = try await storage.user(named: user) else { throw ValidationError("no user '\(user)'") }
                id = found.id
            }
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            print(["ID", "USER", "CREATED", "DATASETS", "ACCESS", "EXPIRES", "STATE"].joined(separator: "\t"))
            for token in try await storage.tokens(user: id) {
                let state = token.revokedAt != nil ? "revoked" : token.scope.hasExpired(at: now) ? "expired" : "live"
                let datasets = token.scope.datasets == nil ? "all" : token.datasets.isEmpty ? "none (deleted)" : token.datasets.joined(separator: ",")
                print(
                    [
                        token.id, token.user, Users.List.date(token.createdAt), datasets, token.scope.readOnly ? "read-only" : "read-write",
                        token.scope.expiresAt.map(Users.List.date) ?? "never", state,
                    ].joined(separator: "\t"))
            }
        }
    }
}

import ArgumentParser
import Foundation
import TandemServer

extension Users {
    /// `tandem-server users role NAME operator|user`.
    struct Role: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a user an operator (their token opens the dashboard, /admin) or a plain user again.",
            discussion: "A browser session of a user made a plain user ends at its next page.")
        @OptionGroup var data: DataOptions
        @Argument(help: "The user name.") var name: String
        @Argument(help: "operator or user.") var role: String

        func run() async throws {
            guard role == "operator" || role == "user" else { throw ValidationError("the role is operator or user, not '\(role)'") }
            let storage = try await data.storage()
            guard let user = try await storage.user(named: name) else { throw ValidationError("no user '\(name)'") }
            try await storage.setOperator(user: user.id, role == "operator")
            print("user \(name) is \(role == "operator" ? "an operator" : "a plain user")")
        }
    }
}

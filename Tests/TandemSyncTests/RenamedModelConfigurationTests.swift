import Foundation
import Logging
import Tandem
import TandemSchema
import Testing
@testable import TandemSync

/// Conflict policies and `updateWinsOverDelete` may name a renamed model by its class name
/// or its first name; the engine applies them under the name pulled changes carry.
@Suite("Sync configuration of renamed models")
struct RenamedModelConfigurationTests {
    static func engine(_ configure: (inout SyncConfiguration) -> Void) throws -> SyncEngine {
        let schema = Schema(entities: [Schema.Entity(name: "Label", attributes: [Schema.Attribute(name: "name", type: .scalar(.string))], originalName: "Tag")])
        let store = try ModelContainer(schema: schema, configuration: ModelConfiguration(isStoredInMemoryOnly: true))
        var configuration = SyncConfiguration(token: { "t" })
        configure(&configuration)
        let transport = MemoryTransport { _ in TransportResponse(status: 500) }
        return SyncEngine(container: store, transport: transport, configuration: configuration, logger: Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() }))
    }

    @Test func policiesNamingTheClassApplyUnderTheFirstName() async throws {
        let engine = try Self.engine {
            $0.conflictPolicies = ["Label.name": .serverWins, "Other": .clientWins]
            $0.updateWinsOverDelete = ["Label"]
        }
        let applied = try await engine.appliedNames()
        #expect(applied.policies == ["Tag.name", "Other"])
        #expect(applied.updateWinsOverDelete == ["Tag"])
    }

    @Test func oneColumnNamedTwiceIsAConfigurationError() async throws {
        let engine = try Self.engine { $0.conflictPolicies = ["Label.name": .serverWins, "Tag.name": .clientWins] }
        let error = await #expect(throws: SyncError.self) { try await engine.appliedNames() }
        #expect(error?.code == .misconfigured && error?.message.contains("'Label.name' and 'Tag.name'") == true, "\(error?.message ?? "")")
        // Every sync stops at it, before anything is sent (the transport answers nothing).
        let syncError = await #expect(throws: SyncError.self) { try await engine.sync() }
        #expect(syncError?.code == .misconfigured)
    }
}

extension SyncEngine {
    /// The names an applier of this engine applies its policies under.
    fileprivate func appliedNames() throws -> (policies: Set<String>, updateWinsOverDelete: Set<String>) {
        let applier = try makeApplier()
        return (Set(applier.policies.keys), applier.updateWinsOverDelete)
    }
}

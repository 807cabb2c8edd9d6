import Foundation
import Hummingbird
import HummingbirdTesting
import Tandem
import TandemCurl
import TandemServerTestSupport
import TandemSync
import TandemSyncTestSupport
import Testing

/// The app's own sign-in through a real `tandem-server`: its JWKS served over HTTP by the
/// test (the identity provider), the store syncing with a JWT as it would with a token.
@Suite("JWT sign-in (the processes)", .serialized)
struct JWTProcessTests {
    @Test func anAppsJWTSyncsThroughARealServerThatFetchesItsJWKS() async throws {
        let keys = try JWTTestKeys()
        let jwks = try keys.jwks()
        let router = Router()
        router.get("jwks.json") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: jwks)))
        }
        let provider = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await provider.test(.live) { client in
            let port = try #require(client.port)
            let server = try await SyncServerProcess.make()
            let executable = try #require(SyncServerProcess.executable)
            let dir = server.dataDir.path(percentEncoded: false)
            let jwtOptions = ["--jwt-issuer", JWTTestKeys.issuer, "--jwt-audience", JWTTestKeys.audience]

            // A JWKS the server cannot read stops it at start, saying so.
            let missing = try await SyncServerProcess.offThread {
                try SyncServerProcess.invoke(executable, ["serve", "--data-dir", dir, "--port", "1", "--jwks", "http://127.0.0.1:\(port)/missing.json"] + jwtOptions)
            }
            #expect(missing.status != 0 && missing.error.contains("--jwks"), "\(missing)")
            let halfConfigured = try SyncServerProcess.invoke(executable, ["serve", "--data-dir", dir, "--jwks", "jwks.json"])
            #expect(halfConfigured.status != 0 && halfConfigured.error.contains("--jwt-issuer"), "\(halfConfigured)")

            await server.stopped()
            server.extraArguments = ["--jwks", "http://127.0.0.1:\(port)/jwks.json"] + jwtOptions
            try await server.started()
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let jwt = try keys.token(JWTTestKeys.claims(sub: "alice", now: now), alg: "ES256", kid: "ec-1", signer: .ec)
            func engine(_ store: ModelContainer, _ token: String) throws -> SyncEngine {
                SyncEngine(container: store, transport: try CurlTransport(baseURL: server.base), configuration: SyncConfiguration(token: { token }))
            }
            let phone = try SyncFixtures.store(), laptop = try SyncFixtures.store()
            try SyncFixtures.insert(phone, 1, title: "signed in with the app")
            let pushed = try await engine(phone, jwt).sync()
            #expect(pushed.pushed == 1 && pushed.isComplete, "\(pushed)")
            // Another of alice's devices, with another of her JWTs (another key of the JWKS).
            let other = try keys.token(JWTTestKeys.claims(sub: "alice", now: now), alg: "EdDSA", kid: "ed-1", signer: .ed)
            #expect(try await engine(laptop, other).sync().pulled == 1)
            #expect(try SyncFixtures.rows(laptop) == SyncFixtures.rows(phone))
            let users = try SyncServerProcess.run(executable, ["users", "list", "--data-dir", dir])
            #expect(users.contains("\nalice\t"), "made on first use: \(users)")

            // Refused JWTs say why, and the store keeps its changes pending.
            try SyncFixtures.insert(phone, 2, title: "after the expiry")
            let expiredJWT = try keys.token(JWTTestKeys.claims(sub: "alice", now: now, ["exp": now / 1000 - 5]), alg: "ES256", kid: "ec-1", signer: .ec)
            let expired = await #expect(throws: SyncError.self) { try await engine(phone, expiredJWT).sync() }
            #expect(expired?.message.contains("expired") == true, "\(expired?.message ?? "")")
            let forged = try keys.token(JWTTestKeys.claims(sub: "alice", now: now), alg: "HS256", kid: "ec-1", signer: .hmac(Data(jwks)))
            let refused = await #expect(throws: SyncError.self) { try await engine(phone, forged).sync() }
            #expect(refused?.status == 401, "\(String(describing: refused))")
            #expect(try SyncStatus(of: phone).pendingChanges == 1)
        }
    }
}

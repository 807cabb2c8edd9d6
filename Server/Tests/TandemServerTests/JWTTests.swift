import Crypto
import TandemServerTestSupport
import Foundation
import HTTPTypes
import Logging
import Testing
@testable import TandemServer
import TandemWire

/// The app's own sign-in: JWTs of its identity provider, verified against its JWKS. Every
/// way a JWT can be wrong gets its documented answer; keys are made by the tests.
@Suite("JWT sign-in")
struct JWTTests {
    static let now: Int64 = 1_800_000_000_000

    static func harness(
        keys: JWTTestKeys, source: MemoryJWKSSource, userClaim: String = "sub", refetch: Duration = .seconds(30)
    ) async throws -> ServerHarness {
        let base = try await ServerHarness.make(.memory, now: { now })
        var dependencies = base.dependencies
        dependencies.jwt = JWTVerifier(
            settings: JWTSettings(issuer: JWTTestKeys.issuer, audience: JWTTestKeys.audience, userClaim: userClaim, refetchInterval: refetch),
            source: source, logger: Logger(label: "test"))
        try await dependencies.jwt?.load()
        return ServerHarness(storage: base.storage, dependencies: dependencies, ann: base.ann, bob: base.bob)
    }

    @Test func aValidJWTOfEachAcceptedAlgorithmSignsInItsUserMadeOnFirstUse() async throws {
        let keys = try JWTTestKeys()
        let harness = try await Self.harness(keys: keys, source: MemoryJWKSSource(try keys.jwks()))
        let claims = JWTTestKeys.claims(now: Self.now)
        let tokens = try [("ES256", "ec-1", JWTTestKeys.Signer.ec), ("EdDSA", "ed-1", .ed), ("RS256", "rsa-1", .rsa)].map { alg, kid, signer in
            (alg, try keys.token(claims, alg: alg, kid: kid, signer: signer))
        }
        try await harness.run { client in
            for (alg, token) in tokens {
                let reply = try await client.send(.put, "/v1/datasets/notes", token: token)
                #expect([201, 200].contains(Int(reply.status.code)), "\(alg): \(reply.status) \(String(decoding: reply.body, as: UTF8.self))")
            }
            let alice = try #require(try await harness.storage.user(named: "alice"))
            #expect(try await harness.storage.datasets(owner: alice.id).map(\.name) == ["notes"], "one user, one dataset, whichever key")
            #expect(try await harness.storage.users(now: 0).map(\.user.name) == ["alice", "ann", "bob"])
        }
    }

    @Test func everyWrongJWTGetsItsDocumentedAnswer() async throws {
        let keys = try JWTTestKeys()
        let source = MemoryJWKSSource(try keys.jwks())
        // The refetch interval is real time: an hour, so a loaded machine (a run saw this
        // test pass 30 s) cannot reach it.
        let harness = try await Self.harness(keys: keys, source: source, refetch: .seconds(3600))
        let now = Self.now
        let publicKeyBytes = keys.ec.publicKey.x963Representation
        let jwkBytes = try JSONSerialization.data(withJSONObject: keys.ecJWK(), options: [.sortedKeys])
        var tampered = try keys.token(JWTTestKeys.claims(now: now), alg: "ES256", kid: "ec-1", signer: .ec).split(separator: ".").map(String.init)
        tampered[1] = JWTTestKeys.base64URL(try JSONSerialization.data(withJSONObject: JWTTestKeys.claims(sub: "mallory", now: now)))
        let cases: [(String, String, code: String, says: String)] = [
            ("expired", try keys.token(JWTTestKeys.claims(now: now, ["exp": now / 1000 - 1]), alg: "ES256", kid: "ec-1", signer: .ec), "token_expired", "expired"),
            (
                "not yet valid", try keys.token(JWTTestKeys.claims(now: now, ["nbf": now / 1000 + 600]), alg: "ES256", kid: "ec-1", signer: .ec),
                "token_not_yet_valid", "not valid yet"
            ),
            ("no expiry", try keys.token(JWTTestKeys.claims(now: now, ["exp": NSNull()]), alg: "ES256", kid: "ec-1", signer: .ec), "unauthorized", "no exp"),
            (
                "wrong issuer", try keys.token(JWTTestKeys.claims(now: now, ["iss": "https://evil.example/"]), alg: "ES256", kid: "ec-1", signer: .ec),
                "unauthorized", "issuer"
            ),
            (
                "wrong audience", try keys.token(JWTTestKeys.claims(now: now, ["aud": ["another-app"]]), alg: "ES256", kid: "ec-1", signer: .ec),
                "unauthorized", "audience"
            ),
            ("bad signature", tampered.joined(separator: "."), "unauthorized", "signature"),
            ("alg none", try keys.token(JWTTestKeys.claims(now: now), alg: "none", kid: "ec-1", signer: .none), "unauthorized", "algorithm none"),
            (
                "HS256 with the public key", try keys.token(JWTTestKeys.claims(now: now), alg: "HS256", kid: "ec-1", signer: .hmac(publicKeyBytes)),
                "unauthorized", "algorithm HS256"
            ),
            (
                "HS256 with the JWK", try keys.token(JWTTestKeys.claims(now: now), alg: "HS256", kid: "ec-1", signer: .hmac(jwkBytes)), "unauthorized",
                "algorithm HS256"
            ),
            ("unknown kid", try keys.token(JWTTestKeys.claims(now: now), alg: "ES256", kid: "ec-9", signer: .ec), "unauthorized", "not in the identity provider's JWKS"),
            ("no kid", try keys.token(JWTTestKeys.claims(now: now), alg: "ES256", kid: nil, signer: .ec), "unauthorized", "names no key"),
            ("another key's algorithm", try keys.token(JWTTestKeys.claims(now: now), alg: "RS256", kid: "ec-1", signer: .rsa), "unauthorized", "verifies ES256"),
            (
                "a user claim that is no user name", try keys.token(JWTTestKeys.claims(sub: "ann@example.com", now: now), alg: "ES256", kid: "ec-1", signer: .ec),
                "unauthorized", "--jwt-user-claim"
            ),
            ("malformed", "a.b.c", "unauthorized", "malformed JWT"),
            (
                "a user of another letter case", try keys.token(JWTTestKeys.claims(sub: "ANN", now: now), alg: "ES256", kid: "ec-1", signer: .ec),
                "unauthorized", "belongs to another account"
            ),
            (
                "an exp no clock reaches", try keys.token(JWTTestKeys.claims(now: now, ["exp": 1e300]), alg: "ES256", kid: "ec-1", signer: .ec),
                "unauthorized", "no exp"
            ),
            ("no sub", try keys.token(JWTTestKeys.claims(now: now, ["sub": NSNull()]), alg: "ES256", kid: "ec-1", signer: .ec), "unauthorized", "no sub"),
            (
                "a critical extension", try keys.token(JWTTestKeys.claims(now: now), alg: "ES256", kid: "ec-1", signer: .ec, crit: ["exp"]),
                "unauthorized", "critical extensions"
            ),
        ]
        try await harness.run { client in
            for (name, token, code, says) in cases {
                let reply = try await client.send(.get, "/v1/datasets", token: token)
                let text = String(decoding: reply.body, as: UTF8.self)
                #expect(reply.status == .unauthorized && reply.errorCode == code && text.contains(says), "\(name): \(reply.status) \(text)")
            }
        }
        #expect(try await harness.storage.users(now: 0).map(\.user.name) == ["ann", "bob"], "no refused JWT made a user")
        #expect(source.fetches == 1, "unknown key ids within the refetch interval do not read the JWKS again")
    }

    @Test func aKeyRotatedIntoTheJWKSIsReadOnItsFirstUse() async throws {
        let keys = try JWTTestKeys()
        let source = MemoryJWKSSource(try keys.jwks())
        let harness = try await Self.harness(keys: keys, source: source, refetch: .zero)
        let next = P256.Signing.PrivateKey()
        let token = try keys.token(JWTTestKeys.claims(now: Self.now), alg: "ES256", kid: "ec-2", signer: .ec, ecKey: next)
        try await harness.run { client in
            #expect(try await client.send(.get, "/v1/datasets", token: token).status == .unauthorized, "not published yet")
            source.set(try keys.jwks(extra: [keys.ecJWK(kid: "ec-2", key: next)]))
            #expect(try await client.send(.get, "/v1/datasets", token: token).status == .ok, "read again for the new kid")
            // The old key, dropped from the JWKS, stops working once it is read again.
            source.set(try JSONSerialization.data(withJSONObject: ["keys": [keys.ecJWK(kid: "ec-2", key: next)]]))
            let old = try keys.token(JWTTestKeys.claims(now: Self.now), alg: "ES256", kid: "ec-1", signer: .ec)
            #expect(try await client.send(.get, "/v1/datasets", token: old).status == .ok, "still cached")
            let stranger = try keys.token(JWTTestKeys.claims(now: Self.now), alg: "ES256", kid: "ec-3", signer: .ec)
            #expect(try await client.send(.get, "/v1/datasets", token: stranger).status == .unauthorized)
            #expect(try await client.send(.get, "/v1/datasets", token: old).status == .unauthorized, "the read for ec-3 dropped ec-1")
        }
    }

    @Test func aJWKSWithoutUsableKeysIsRefusedAndUnusableKeysAreSkipped() async throws {
        let keys = try JWTTestKeys()
        let oct = ["kty": "oct", "kid": "h-1", "k": JWTTestKeys.base64URL(Data("secret".utf8))]
        let p384 = ["kty": "EC", "crv": "P-384", "kid": "ec-384", "x": "AAAA", "y": "AAAA"]
        let other = P256.Signing.PrivateKey()
        var encryption = keys.ecJWK(kid: "enc-1", key: other)
        encryption["use"] = "enc"
        let mixed = JWTVerifier(
            settings: JWTSettings(issuer: JWTTestKeys.issuer, audience: JWTTestKeys.audience),
            source: MemoryJWKSSource(try keys.jwks(extra: [oct, p384, encryption])), logger: Logger(label: "test"))
        #expect(try await mixed.load() == 3, "the encryption key is no signing key")
        let byEncryptionKey = try keys.token(JWTTestKeys.claims(now: Self.now), alg: "ES256", kid: "enc-1", signer: .ec, ecKey: other)
        await #expect(throws: APIError.self) { try await mixed.verify(byEncryptionKey, now: Self.now) }
        let useless = JWTVerifier(
            settings: JWTSettings(issuer: JWTTestKeys.issuer, audience: JWTTestKeys.audience),
            source: MemoryJWKSSource(try JSONSerialization.data(withJSONObject: ["keys": [oct]])), logger: Logger(label: "test"))
        await #expect(throws: StorageError.self) { try await useless.load() }
        let notJSON = JWTVerifier(
            settings: JWTSettings(issuer: JWTTestKeys.issuer, audience: JWTTestKeys.audience), source: MemoryJWKSSource(Data("<html>".utf8)),
            logger: Logger(label: "test"))
        await #expect(throws: StorageError.self) { try await notJSON.load() }
        #expect(throws: StorageError.self) { try JWKSSources.live("http://example.com/jwks.json") }
        #expect(try JWKSSources.live("http://127.0.0.1:9/jwks.json") is URLJWKSSource)
        #expect(try JWKSSources.live("jwks.json") is FileJWKSSource)
    }

    @Test func aJWTUserIsAMemberLikeAnyOtherAndAnotherClaimCanNameTheUser() async throws {
        let keys = try JWTTestKeys()
        let harness = try await Self.harness(keys: keys, source: MemoryJWKSSource(try keys.jwks()), userClaim: "preferred_username")
        let token = try keys.token(
            JWTTestKeys.claims(sub: "auth0|12345", now: Self.now, ["preferred_username": "carol"]), alg: "EdDSA", kid: "ed-1", signer: .ed)
        try await harness.run { client in
            try await client.setUp("todos", token: harness.ann)
            #expect(try await client.send(.get, "/v1/datasets/ann~todos/pull", token: token).errorCode == "not_shared")
            #expect(try await client.json(.put, "/v1/datasets/todos/members/carol", token: harness.ann, MemberRole(role: .reader)).status == .created)
            #expect(try await client.send(.get, "/v1/datasets/ann~todos/pull", token: token).status == .ok)
            let push = try await client.push("ann~todos", token: token, key: "c", PushRequest(schemaVersion: 1, changes: [ServerHarness.insert("todos", 1)]))
            #expect(push.errorCode == "role_too_low")
        }
    }

    /// A name claim the account's owner can edit (`preferred_username`) never reaches
    /// another user's data: a user is bound to the subject that made them.
    @Test func aJWTNeverTakesOverAnotherUsersName() async throws {
        let keys = try JWTTestKeys()
        let harness = try await Self.harness(keys: keys, source: MemoryJWKSSource(try keys.jwks()), userClaim: "preferred_username")
        func jwt(sub: String, name: String) throws -> String {
            try keys.token(JWTTestKeys.claims(sub: sub, now: Self.now, ["preferred_username": name]), alg: "ES256", kid: "ec-1", signer: .ec)
        }
        let mallory = try jwt(sub: "acct-666", name: "ann")
        let carol = try jwt(sub: "acct-1", name: "carol")
        let renamed = try jwt(sub: "acct-1", name: "carolyn")
        let thief = try jwt(sub: "acct-2", name: "carol")
        let linked = try jwt(sub: "acct-9", name: "whatever")
        _ = try await harness.storage.addUser(name: "dave", now: 0, subject: "acct-9")
        try await harness.run { client in
            try await client.setUp("todos", token: harness.ann)
            let takeover = try await client.send(.get, "/v1/datasets/todos/pull", token: mallory)
            #expect(takeover.status == .unauthorized && (try? takeover.decode(WireErrorBody.self))?.error.message.contains("another account") == true)
            #expect(try await client.send(.put, "/v1/datasets/notes", token: carol).status == .created)
            #expect(try await client.send(.put, "/v1/datasets/notes", token: renamed).status == .ok, "the same account, whatever its name claim now")
            #expect(try await client.send(.get, "/v1/datasets/notes/pull", token: thief).status == .unauthorized, "another account naming itself carol")
            #expect(try await client.send(.put, "/v1/datasets/dave-notes", token: linked).status == .created)
        }
        let dave = try #require(try await harness.storage.user(named: "dave"))
        #expect(try await harness.storage.datasets(owner: dave.id).map(\.name) == ["dave-notes"], "the operator's binding")
        #expect(try await harness.storage.users(now: 0).map(\.user.name) == ["ann", "bob", "carol", "dave"])
    }

    @Test func aJWTFromAFileAndAnAPITokenWorkSideBySide() async throws {
        let keys = try JWTTestKeys()
        let file = FileManager.default.temporaryDirectory.appending(path: "jwks-\(UUID().uuidString).json")
        try keys.jwks().write(to: file)
        let base = try await ServerHarness.make(.sqlite, now: { Self.now })
        var dependencies = base.dependencies
        dependencies.jwt = JWTVerifier(
            settings: JWTSettings(issuer: JWTTestKeys.issuer, audience: JWTTestKeys.audience),
            source: try JWKSSources.live(file.path(percentEncoded: false)), logger: Logger(label: "test"))
        let harness = ServerHarness(storage: base.storage, dependencies: dependencies, ann: base.ann, bob: base.bob)
        try await harness.run { client in
            let jwt = try keys.token(JWTTestKeys.claims(now: Self.now), alg: "RS256", kid: "rsa-1", signer: .rsa)
            #expect(try await client.send(.put, "/v1/datasets/todos", token: jwt).status == .created)
            #expect(try await client.send(.put, "/v1/datasets/todos", token: harness.ann).status == .created, "ann's own todos")
            #expect(try await client.send(.get, "/v1/datasets", token: "Bearer-less").status == .unauthorized)
        }
    }
}

import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import Testing
@testable import TandemServer
import TandemWire

/// The operator's dashboard: opened by an operator's token or session, refused to everyone
/// else, and its one action guarded against other sites' forms.
@Suite("Operator dashboard")
struct AdminRoutesTests {
    /// A harness whose `ann` is an operator, with two datasets in it (one of bob's shared with ann).
    static func harness(_ kind: StorageKind) async throws -> ServerHarness {
        let harness = try await ServerHarness.make(kind)
        let ann = try await harness.storage.user(named: "ann")!
        try await harness.storage.setOperator(user: ann.id, true)
        try await harness.run { client in
            try await client.setUp("todos", token: harness.ann)
            try await client.setUp("groceries", token: harness.bob)
            _ = try await client.json(.put, "/v1/datasets/bob~groceries/members/ann", token: harness.bob, ["role": "reader"])
            let push = PushRequest(
                schemaVersion: 1,
                changes: [
                    WireChange(
                        record: "tandem://todos/Todo/6f1c5d0e-8a4b-4c55-9b43-3f6c1f7a2b10", entity: "Todo", kind: .insert,
                        values: ["title": .text("<script>alert(1)</script>"), "rank": .integer(1), "people.name": .text("x"), "people.age": .integer(3)],
                        stamps: ["*": "0190a1b2c3d4-0000-00000000000000aa"])
                ])
            #expect(try await client.push("todos", token: harness.ann, key: "k1", push).status == .ok)
        }
        return harness
    }

    static func text(_ reply: Reply) -> String { String(decoding: reply.body, as: UTF8.self) }

    @Test(arguments: StorageKind.allCases)
    func anOperatorsTokenOpensTheDashboardWithEveryDataset(kind: StorageKind) async throws {
        let harness = try await Self.harness(kind)
        try await harness.run { client in
            let reply = try await client.send(.get, "/admin", token: harness.ann)
            #expect(reply.status == .ok)
            #expect(reply.headers[.contentType] == "text/html; charset=utf-8")
            let page = Self.text(reply)
            #expect(page.contains("<td>ann/todos</td>"))
            #expect(page.contains("<td>bob/groceries</td>"))
            #expect(page.contains("ann (reader)"))
            #expect(page.contains("<td>ann</td><td>operator</td>"))
            #expect(page.contains("<td>bob</td><td>user</td>"))
            // The pushed record is counted; the dataset's values never reach the page.
            #expect(page.contains(#"<td class="n">1</td>"#))
            #expect(!page.contains("<script>"))
            #expect(!page.contains("more (the first"))
        }
    }

    @Test(arguments: StorageKind.allCases)
    func everyoneElseIsRefused(kind: StorageKind) async throws {
        let harness = try await Self.harness(kind)
        try await harness.run { client in
            let none = try await client.send(.get, "/admin", token: nil)
            #expect(none.status == .unauthorized)
            #expect(none.headers[.wwwAuthenticate] == "Bearer")
            #expect(Self.text(none).contains("action=\"/admin/sign-in\""))
            let user = try await client.send(.get, "/admin", token: harness.bob)
            #expect(user.status == .forbidden)
            #expect(Self.text(user).contains("bob is not an operator"))
            #expect(!Self.text(user).contains("groceries"))
            let forged = try await client.send(.get, "/admin", token: "tdm_nope_nope")
            #expect(forged.status == .unauthorized)
            let cookie = try await client.send(.get, "/admin", token: nil, headers: [.cookie: "tandem_admin=made-up"])
            #expect(cookie.status == .unauthorized)
        }
    }

    static func form(_ fields: String, cookie: String? = nil, origin: String? = nil) -> HTTPFields {
        var headers: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
        if let cookie { headers[.cookie] = "tandem_admin=\(cookie)" }
        if let origin { headers[.origin] = origin }
        return headers
    }

    /// The session id a sign-in answer sets.
    static func session(_ reply: Reply) -> String? {
        guard let header = reply.headers[.setCookie], header.hasPrefix("tandem_admin=") else { return nil }
        return header.dropFirst("tandem_admin=".count).split(separator: ";").first.map(String.init)
    }

    @Test(arguments: StorageKind.allCases)
    func aBrowserSignsInWithTheFormAndOutWithItsFormToken(kind: StorageKind) async throws {
        let harness = try await Self.harness(kind)
        try await harness.run { client in
            #expect(try await client.send(.get, "/admin/sign-in", token: nil).status == .ok)
            let token = harness.ann.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let signedIn = try await client.send(.post, "/admin/sign-in", token: nil, body: Data("token=\(token)".utf8), headers: Self.form(""))
            #expect(signedIn.status == .seeOther)
            #expect(signedIn.headers[.location] == "/admin")
            let cookie = try #require(Self.session(signedIn))
            #expect(signedIn.headers[.setCookie]?.contains("HttpOnly") == true)
            #expect(signedIn.headers[.setCookie]?.contains("SameSite=Strict") == true)
            let page = try await client.send(.get, "/admin", token: nil, headers: [.cookie: "tandem_admin=\(cookie)"])
            #expect(page.status == .ok)
            let html = Self.text(page)
            let formToken = try #require(html.firstRange(of: #"name="form" value=""#).map { String(html[$0.upperBound...].prefix(64)) })
            // Another site's form: no form token, or a foreign Origin.
            let noToken = try await client.send(.post, "/admin/sign-out", token: nil, body: Data("form=x".utf8), headers: Self.form("", cookie: cookie))
            #expect(noToken.status == .forbidden)
            let foreign = try await client.send(
                .post, "/admin/sign-out", token: nil, body: Data("form=\(formToken)".utf8), headers: Self.form("", cookie: cookie, origin: "https://evil.example"))
            #expect(foreign.status == .forbidden)
            #expect(try await client.send(.get, "/admin", token: nil, headers: [.cookie: "tandem_admin=\(cookie)"]).status == .ok)
            let out = try await client.send(.post, "/admin/sign-out", token: nil, body: Data("form=\(formToken)".utf8), headers: Self.form("", cookie: cookie))
            #expect(out.status == .seeOther)
            #expect(try await client.send(.get, "/admin", token: nil, headers: [.cookie: "tandem_admin=\(cookie)"]).status == .unauthorized)
        }
    }

    @Test(arguments: StorageKind.allCases)
    func theSignInFormRefusesBadTokensAndNonOperators(kind: StorageKind) async throws {
        let harness = try await Self.harness(kind)
        try await harness.run { client in
            let bad = try await client.send(.post, "/admin/sign-in", token: nil, body: Data("token=tdm_x_y".utf8), headers: Self.form(""))
            #expect(bad.status == .unauthorized)
            #expect(Self.session(bad) == nil)
            #expect(Self.text(bad).contains("That token does not sign in"))
            let bob = try await client.send(.post, "/admin/sign-in", token: nil, body: Data("token=\(harness.bob)".utf8), headers: Self.form(""))
            #expect(bob.status == .forbidden)
            #expect(Self.session(bob) == nil)
            let foreign = try await client.send(
                .post, "/admin/sign-in", token: nil, body: Data("token=\(harness.ann)".utf8), headers: Self.form("", origin: "https://evil.example"))
            #expect(foreign.status == .forbidden)
            #expect(Self.session(foreign) == nil)
        }
    }

    @Test func sessionsExpireAndStayBounded() async throws {
        let clock = NIOLockedValueBox<Int64>(0)
        let sessions = AdminSessions(lifetime: 1_000, limit: 2, now: { clock.withLockedValue { $0 } })
        let ann = ServerUser(id: 1, name: "ann", isOperator: true)
        let first = await sessions.open(for: ann)
        #expect(await sessions.session(first.id) == first.session)
        clock.withLockedValue { $0 = 999 }
        let second = await sessions.open(for: ann)
        let third = await sessions.open(for: ann)  // full: the oldest goes
        #expect(await sessions.session(first.id) == nil)
        #expect(await sessions.session(second.id) != nil)
        clock.withLockedValue { $0 = 2_000 }
        #expect(await sessions.session(third.id) == nil)
        #expect(first.session.formToken != second.session.formToken)
    }

    @Test func oneUserSigningInAgainAndAgainSignsNoOtherOut() async throws {
        let sessions = AdminSessions(limit: 10, perUser: 3, now: { 0 })
        let bob = await sessions.open(for: ServerUser(id: 2, name: "bob", isOperator: true))
        for _ in 0..<50 { _ = await sessions.open(for: ServerUser(id: 1, name: "ann", isOperator: true)) }
        #expect(await sessions.session(bob.id) != nil)
    }
}

/// The dashboard's refusals that need a clock, revocation or odd input.
@Suite("Operator dashboard: sessions end with their credential")
struct AdminSessionEndTests {
    @Test func aSessionEndsWhenItsTokenIsRevokedOrTheUserIsNoLongerAnOperator() async throws {
        let harness = try await AdminRoutesTests.harness(.sqlite)
        let ann = try await harness.storage.user(named: "ann")!
        try await harness.run { client in
            func signIn(_ token: String) async throws -> String {
                let reply = try await client.send(
                    .post, "/admin/sign-in", token: nil, body: Data("token=\(token)".utf8), headers: AdminRoutesTests.form(""))
                return try #require(AdminRoutesTests.session(reply))
            }
            func page(_ cookie: String) async throws -> HTTPResponse.Status {
                try await client.send(.get, "/admin", token: nil, headers: [.cookie: "tandem_admin=\(cookie)"]).status
            }
            let second = try await TokenIssuer.issue(for: ann, in: harness.storage)
            let cookie = try await signIn(second)
            #expect(try await page(cookie) == .ok)
            #expect(try await harness.storage.revokeToken(id: APIToken(text: second)!.id))
            #expect(try await page(cookie) == .unauthorized)
            let again = try await signIn(harness.ann)
            #expect(try await page(again) == .ok)
            try await harness.storage.setOperator(user: ann.id, false)
            #expect(try await page(again) == .forbidden)
        }
    }

    @Test func aTokenLimitedToSomeDatasetsDoesNotOpenIt() async throws {
        let harness = try await AdminRoutesTests.harness(.memory)
        let ann = try await harness.storage.user(named: "ann")!
        let scoped = try await TokenIssuer.issue(for: ann, in: harness.storage, scope: TokenScope(datasets: [1]))
        try await harness.run { client in
            #expect(try await client.send(.get, "/admin", token: scoped).status == .forbidden)
            let reply = try await client.send(.post, "/admin/sign-in", token: nil, body: Data("token=\(scoped)".utf8), headers: AdminRoutesTests.form(""))
            #expect(reply.status == .forbidden)
            #expect(AdminRoutesTests.session(reply) == nil)
        }
    }

    @Test func brokenFormsAreReadWithoutStoppingTheServer() async throws {
        #expect(AdminRoutes.form("token=%") == [:])
        #expect(AdminRoutes.form("token=a%20b+c&token=second&x") == ["token": "a b c", "x": ""])
        #expect(AdminRoutes.form("t=%zz&u=\u{e9}<\"# ") == ["u": "\u{e9}<\"# "])
        let harness = try await AdminRoutesTests.harness(.memory)
        try await harness.run { client in
            for body in ["token=%", "token=%E9", "token=<\"#>", "%%%=%%%", String(repeating: "a", count: 20_000)] {
                let reply = try await client.send(.post, "/admin/sign-in", token: nil, body: Data(body.utf8), headers: AdminRoutesTests.form(""))
                #expect(reply.status.code < 500, "\(body.prefix(20))")
            }
        }
    }

    @Test func theOriginMustBeThisServer() {
        #expect(AdminRoutes.sameSite(origin: "http://h:8080", host: "h:8080"))
        #expect(AdminRoutes.sameSite(origin: "http://h", host: "h"))
        #expect(AdminRoutes.sameSite(origin: "http://h", host: "h:80"))
        #expect(AdminRoutes.sameSite(origin: "https://H.example", host: "h.example:443"))
        #expect(AdminRoutes.sameSite(origin: "http://[::1]:8080", host: "[::1]:8080"))
        #expect(!AdminRoutes.sameSite(origin: "http://h:9999", host: "h"))
        #expect(!AdminRoutes.sameSite(origin: "http://h", host: "h:8080"))
        #expect(!AdminRoutes.sameSite(origin: "https://h", host: "h:80"))
        #expect(!AdminRoutes.sameSite(origin: "null", host: "h"))
        #expect(!AdminRoutes.sameSite(origin: "http://evil.example", host: "h"))
        #expect(!AdminRoutes.sameSite(origin: "http://h.evil", host: "h"))
        #expect(!AdminRoutes.sameSite(origin: "http://h", host: ""))
    }
}

import Foundation
import HTTPTypes
import Hummingbird
import Mustache
import NIOCore

/// The operator's dashboard under `/admin`: an operator's bearer token opens it (scripts,
/// curl), and the sign-in form exchanges one for a session cookie (browsers). Other users get
/// 403, no credential 401. The session cookie is `HttpOnly` and `SameSite=Strict`; every
/// action (sign-out) is a POST carrying the session's form token, and a POST whose `Origin`
/// is another site's is refused.
///
/// ```swift
/// AdminRoutes(dependencies: dependencies, authenticator: authenticator).register(on: router)
/// ```
struct AdminRoutes: Sendable {
    let dependencies: ServerDependencies
    let authenticator: Authenticator
    let sessions: AdminSessions
    let startedAt: Int64
    static let cookie = "tandem_admin"

    init(dependencies: ServerDependencies, authenticator: Authenticator) {
        self.dependencies = dependencies
        self.authenticator = authenticator
        sessions = AdminSessions(now: dependencies.now)
        startedAt = dependencies.now()
    }

    func register(on router: Router<TandemRequestContext>) {
        router.get("admin") { request, _ in try await dashboard(request) }
        router.get("admin/sign-in") { _, _ in Self.page(.ok, Self.signIn.render(["message": nil as String?])) }
        router.post("admin/sign-in") { request, _ in try await signIn(request) }
        router.post("admin/sign-out") { request, _ in try await signOut(request) }
    }

    static let signIn: MustacheTemplate = {
        try! MustacheTemplate(string: DashboardTemplates.signIn)  // fixed text: it parses, or no test passes
    }()

    /// `GET /admin`.
    func dashboard(_ request: Request) async throws -> Response {
        var formToken: String?
        let user: ServerUser
        if let header = request.headers[.authorization] {
            // A script's bearer token: refused as the API refuses it (JSON), 403 unless an operator.
            let credential = try await authenticator.identify(bearer: Authenticator.bearer(header))
            if let refused = Self.refuseScoped(credential) { return refused }
            user = credential.user
        } else if let id = Self.sessionID(request), let session = await sessions.session(id) {
            // The user as stored now (one removed or no longer an operator is signed out), and
            // the token that opened the session still live (revoked or expired, it ends it).
            guard let current = try await dependencies.storage.user(named: session.name), current.id == session.user else {
                await sessions.close(id)
                return Self.refusal(.unauthorized, "Your session ended: the user was removed. Sign in again.")
            }
            if let tokenID = session.tokenID {
                guard let token = try await dependencies.storage.token(id: tokenID), !token.scope.hasExpired(at: dependencies.now()) else {
                    await sessions.close(id)
                    return Self.refusal(.unauthorized, "Your session ended: the token it was opened with was revoked or expired. Sign in again.")
                }
            }
            user = current
            formToken = session.formToken
        } else {
            return Self.refusal(.unauthorized, "Sign in with an operator's token, or send it as Authorization: Bearer.")
        }
        guard user.isOperator else {
            return Self.refusal(.forbidden, "\(user.name) is not an operator: the dashboard is for operators (tandem-server users add NAME --operator).")
        }
        let page = try await DashboardPage.gather(dependencies, operator: user, formToken: formToken, startedAt: startedAt)
        return Self.page(.ok, page.html)
    }

    /// `POST /admin/sign-in` with `token=…` (a form): a session cookie for an operator.
    func signIn(_ request: Request) async throws -> Response {
        if let refused = Self.refuseCrossSite(request) { return refused }
        let form = try await Self.form(request)
        let credential: Authenticator.Credential
        do {
            credential = try await authenticator.identify(bearer: (form["token"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines))
        } catch let error as APIError {
            return Self.page(.unauthorized, Self.signIn.render(["message": "That token does not sign in: \(error.body.error.message)"]))
        }
        guard credential.user.isOperator else {
            return Self.page(.forbidden, Self.signIn.render(["message": "\(credential.user.name) is not an operator: the dashboard is for operators."]))
        }
        if let refused = Self.refuseScoped(credential) { return refused }
        let (id, session) = await sessions.open(for: credential.user, tokenID: credential.tokenID, expiresAt: credential.scope.expiresAt)
        var response = Response(status: .seeOther, headers: [.location: "/admin"])
        let seconds = max((session.expiresAt - dependencies.now()) / 1000, 1)
        // Secure when the browser came over HTTPS (directly, or through a proxy that says so).
        let secure = request.head.scheme == "https" || request.headers[.init("X-Forwarded-Proto")!]?.lowercased() == "https"
        response.headers[.setCookie] = "\(Self.cookie)=\(id); Path=/admin; HttpOnly; SameSite=Strict; Max-Age=\(seconds)\(secure ? "; Secure" : "")"
        return response
    }

    /// `POST /admin/sign-out` with the session's form token.
    func signOut(_ request: Request) async throws -> Response {
        if let refused = Self.refuseCrossSite(request) { return refused }
        guard let id = Self.sessionID(request), let session = await sessions.session(id) else {
            return Self.refusal(.unauthorized, "Not signed in.")
        }
        guard let token = try await Self.form(request)["form"], token == session.formToken else {
            return Self.refusal(.forbidden, "The form is not this session's (a page of another site cannot sign you out).")
        }
        await sessions.close(id)
        var response = Response(status: .seeOther, headers: [.location: "/admin/sign-in"])
        response.headers[.setCookie] = "\(Self.cookie)=; Path=/admin; HttpOnly; SameSite=Strict; Max-Age=0"
        return response
    }

    /// 403 for a token limited to some datasets: the dashboard shows them all.
    static func refuseScoped(_ credential: Authenticator.Credential) -> Response? {
        guard credential.scope.datasets != nil else { return nil }
        return refusal(.forbidden, "This token is limited to some datasets; the dashboard shows every dataset. Use a token made without --dataset.")
    }

    /// The session id of the request's `tandem_admin` cookie.
    static func sessionID(_ request: Request) -> String? {
        for header in request.headers[values: .cookie] {
            for pair in header.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                if parts.count == 2, parts[0] == cookie, !parts[1].isEmpty { return parts[1] }
            }
        }
        return nil
    }

    /// 403 for a POST whose `Origin` is not this server (`Host`, as the client sent it: a
    /// proxy in front must keep it): a form of another site, or of no site (`null`). A request
    /// without `Origin` is no browser's form post (browsers send it on every POST).
    static func refuseCrossSite(_ request: Request) -> Response? {
        guard let origin = request.headers[.origin] else { return nil }
        guard sameSite(origin: origin, host: request.head.authority ?? "") else {
            return refusal(.forbidden, "This form was posted from another site (Origin \(origin)).")
        }
        return nil
    }

    /// Whether `origin` (`scheme://host[:port]`, as browsers send it: no default port) names
    /// `host` (`host[:port]`, IPv6 in brackets): the same host and the same port, a missing
    /// one being its scheme's default.
    ///
    /// ```swift
    /// AdminRoutes.sameSite(origin: "http://h:8080", host: "h:8080")   // true
    /// AdminRoutes.sameSite(origin: "http://h:9999", host: "h")        // false
    /// ```
    static func sameSite(origin: String, host: String) -> Bool {
        guard let separator = origin.range(of: "://"), !host.isEmpty else { return false }
        let scheme = origin[..<separator.lowerBound].lowercased()
        let defaultPort = scheme == "https" ? "443" : scheme == "http" ? "80" : nil
        guard let defaultPort else { return false }
        func withPort(_ authority: String) -> String {
            // A port follows the last ':' after any IPv6 bracket.
            let tail = authority.lastIndex(of: "]").map { authority[$0...] } ?? authority[...]
            return tail.contains(":") ? authority.lowercased() : authority.lowercased() + ":" + defaultPort
        }
        let authority = String(origin[separator.upperBound...])
        return !authority.contains("/") && withPort(authority) == withPort(host)
    }

    /// A form body (`application/x-www-form-urlencoded`, at most 16 KiB), decoded field by
    /// field: a field whose escapes are broken is left out (Foundation's query parsing stops
    /// the process on such text).
    static func form(_ request: Request) async throws -> [String: String] {
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: 16 << 10)
        } catch {
            throw APIError(.contentTooLarge, "body_too_large", "a dashboard form is at most 16 KiB")
        }
        return form(String(buffer: buffer))
    }

    static func form(_ body: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) -> String? { text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding }
            guard let name = decode(parts[0]), let value = parts.count == 2 ? decode(parts[1]) : "", fields[name] == nil else { continue }
            fields[name] = value
        }
        return fields
    }

    static func page(_ status: HTTPResponse.Status, _ html: String) -> Response {
        Response(
            status: status,
            headers: [
                .contentType: "text/html; charset=utf-8", .cacheControl: "no-store",
                .init("Content-Security-Policy")!: "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
            ],
            body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// A refusal as a page: what went wrong and a way on (the sign-in form).
    static func refusal(_ status: HTTPResponse.Status, _ message: String) -> Response {
        var response = page(status, signIn.render(["message": message]))
        if status == .unauthorized { response.headers[.wwwAuthenticate] = "Bearer" }
        return response
    }
}

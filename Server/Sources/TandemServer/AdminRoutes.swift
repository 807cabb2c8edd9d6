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
            user = try await authenticator.identify(bearer: Authenticator.bearer(header)).user
        } else if let id = Self.sessionID(request), let session = await sessions.session(id) {
            // The user as stored now: one removed or no longer an operator is signed out.
            guard let current = try await dependencies.storage.user(named: session.name), current.id == session.user else {
                await sessions.close(id)
                return Self.refusal(.unauthorized, "Your session ended: the user was removed. Sign in again.")
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
        let (id, _) = await sessions.open(for: credential.user)
        var response = Response(status: .seeOther, headers: [.location: "/admin"])
        response.headers[.setCookie] = "\(Self.cookie)=\(id); Path=/admin; HttpOnly; SameSite=Strict; Max-Age=\(sessions.lifetime / 1000)"
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

    /// 403 for a POST whose `Origin` is not this server (`Host`): a form of another site.
    static func refuseCrossSite(_ request: Request) -> Response? {
        guard let origin = request.headers[.origin] else { return nil }
        let host = request.head.authority ?? ""
        guard let url = URL(string: origin), let originHost = url.host(percentEncoded: false),
            host == originHost || host == "\(originHost):\(url.port.map(String.init) ?? "")"
        else {
            return refusal(.forbidden, "This form was posted from another site (Origin \(origin)).")
        }
        return nil
    }

    /// A form body (`application/x-www-form-urlencoded`, at most 16 KiB).
    static func form(_ request: Request) async throws -> [String: String] {
        let buffer = try await request.body.collect(upTo: 16 << 10)
        var components = URLComponents()
        components.percentEncodedQuery = String(buffer: buffer).replacingOccurrences(of: "+", with: "%20")
        var fields: [String: String] = [:]
        for item in components.queryItems ?? [] where fields[item.name] == nil { fields[item.name] = item.value ?? "" }
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

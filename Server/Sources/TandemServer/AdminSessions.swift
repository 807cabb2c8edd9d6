import Foundation

/// The dashboard's browser sessions: a session id (the `tandem_admin` cookie) → the operator
/// it signed in and the form token that guards its actions (CSRF). Held in memory, bounded
/// (the oldest goes when full), each expiring after `lifetime`; a restart signs everyone out.
///
/// ```swift
/// let (id, session) = await sessions.open(for: user)
/// let again = await sessions.session(id)   // the same, until it expires or is closed
/// ```
actor AdminSessions {
    struct Session: Sendable, Hashable {
        var user: Int64
        var name: String
        /// The API token that opened it (`nil`: a JWT, whose expiry bounds the session):
        /// revoked or expired, it ends the session.
        var tokenID: String?
        /// The token every form of the session carries (a hidden field): a page of another
        /// site cannot read it, so it cannot post the form.
        var formToken: String
        var expiresAt: Int64
    }

    let lifetime: Int64
    let limit: Int
    /// The most sessions one user holds (a browser each, say).
    let perUser: Int
    let now: @Sendable () -> Int64
    private var sessions: [String: Session] = [:]

    init(lifetime: Int64 = 12 * 3_600_000, limit: Int = 1_000, perUser: Int = 20, now: @escaping @Sendable () -> Int64) {
        self.lifetime = lifetime
        self.limit = max(limit, 1)
        self.perUser = max(perUser, 1)
        self.now = now
    }

    /// A new session for `user`, signed in with token `tokenID` (`nil`: a JWT), ending at
    /// `lifetime` or at `expiresAt` (the credential's expiry), whichever comes first.
    func open(for user: ServerUser, tokenID: String? = nil, expiresAt: Int64? = nil) -> (id: String, session: Session) {
        let time = now()
        // A user's own sessions make room for their new one first: one operator signing in
        // again and again never signs the others out.
        let own = sessions.filter { $0.value.user == user.id }
        if own.count >= perUser, let oldest = own.min(by: { $0.value.expiresAt < $1.value.expiresAt })?.key {
            sessions[oldest] = nil
        }
        if sessions.count >= limit {
            sessions = sessions.filter { $0.value.expiresAt > time }
            if sessions.count >= limit, let oldest = sessions.min(by: { $0.value.expiresAt < $1.value.expiresAt })?.key {
                sessions[oldest] = nil
            }
        }
        let id = Self.randomHex()
        let session = Session(
            user: user.id, name: user.name, tokenID: tokenID, formToken: Self.randomHex(), expiresAt: min(time + lifetime, expiresAt ?? .max))
        sessions[id] = session
        return (id, session)
    }

    /// The live session `id` names; `nil` when unknown or expired (then forgotten).
    func session(_ id: String) -> Session? {
        guard let session = sessions[id] else { return nil }
        guard session.expiresAt > now() else {
            sessions[id] = nil
            return nil
        }
        return session
    }

    func close(_ id: String) {
        sessions[id] = nil
    }

    /// 32 random bytes as hex.
    static func randomHex() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }
}

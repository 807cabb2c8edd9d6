import Foundation

/// An API token: `tdm_<id>_<secret>`. The id finds the token; only a SHA-256 of the secret is
/// stored, and it is compared in constant time.
///
/// ```swift
/// let token = APIToken.generate()
/// print(token.text)            // printed once, to the user
/// store(token.id, token.secretHash)
/// ```
struct APIToken: Sendable {
    var id: String
    var secret: String

    var text: String { "tdm_\(id)_\(secret)" }
    var secretHash: String { Self.hash(secret) }

    /// A new random token (ids: 12 hex digits; secrets: 64 hex digits, 256 bits).
    static func generate() -> APIToken {
        var generator = SystemRandomNumberGenerator()
        func hex(_ bytes: Int) -> String {
            (0..<bytes).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
        }
        return APIToken(id: hex(6), secret: hex(32))
    }

    /// Parses `tdm_<id>_<secret>`; `nil` when malformed.
    init?(text: String) {
        let parts = text.split(separator: "_", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "tdm", parts[1].count == 12, parts[2].count == 64,
            (parts[1] + parts[2]).allSatisfy(\.isHexDigit)
        else { return nil }
        self.id = String(parts[1])
        self.secret = String(parts[2])
    }

    init(id: String, secret: String) {
        self.id = id
        self.secret = secret
    }

    static func hash(_ secret: String) -> String { SHA256Hex.of(Array(secret.utf8)) }

    /// Whether `secretHash` (as stored) is the hash of this token's secret, compared in
    /// constant time.
    func matches(secretHash: String) -> Bool { SHA256Hex.matches(Array(secret.utf8), hex: secretHash) }
}

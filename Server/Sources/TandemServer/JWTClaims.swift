import JWTKit

/// The claims of an app's JWT as the server reads them: the registered ones it checks, and
/// every string-valued claim (one of them names the user). ``JWTVerifier`` checks times,
/// issuer and audience against its own clock after the signature.
struct JWTClaims: JWTPayload {
    var issuer: String?
    var audience: [String]
    /// Seconds since 1970.
    var expires: Double?
    var notBefore: Double?
    /// Claims with a string or number value, as text.
    var texts: [String: String]

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        var texts: [String: String] = [:]
        for key in container.allKeys {
            if let text = try? container.decode(String.self, forKey: key) {
                texts[key.stringValue] = text
            } else if let number = try? container.decode(Int64.self, forKey: key) {
                texts[key.stringValue] = String(number)
            }
        }
        self.texts = texts
        issuer = texts["iss"]
        let audienceKey = Key(stringValue: "aud")
        if let one = try? container.decode(String.self, forKey: audienceKey) {
            audience = [one]
        } else {
            audience = (try? container.decode([String].self, forKey: audienceKey)) ?? []
        }
        expires = try? container.decode(Double.self, forKey: Key(stringValue: "exp"))
        notBefore = try? container.decode(Double.self, forKey: Key(stringValue: "nbf"))
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        for (key, value) in texts { try container.encode(value, forKey: Key(stringValue: key)) }
    }

    /// Nothing here: the verifier checks the claims with the server's clock.
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

public import Crypto
import CryptoExtras
public import Foundation

/// Keys made by the tests, a JWKS of their public halves, and JWTs signed with them by
/// swift-crypto (the header and claims as given, so hostile tokens can be made too).
public struct JWTTestKeys: Sendable {
    public let ec = P256.Signing.PrivateKey()
    public let ed = Curve25519.Signing.PrivateKey()
    let rsa: _RSA.Signing.PrivateKey
    public static let issuer = "https://id.example.test/"
    public static let audience = "tandem-tests"

    public init() throws {
        rsa = try _RSA.Signing.PrivateKey(keySize: .bits2048)
    }

    public static func base64URL(_ data: some DataProtocol) -> String {
        Data(data).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The public JWK of the EC key under `kid`.
    public func ecJWK(kid: String = "ec-1", key: P256.Signing.PrivateKey? = nil) -> [String: String] {
        let point = (key ?? ec).publicKey.x963Representation.dropFirst()
        return ["kty": "EC", "crv": "P-256", "kid": kid, "x": Self.base64URL(point.prefix(32)), "y": Self.base64URL(point.suffix(32))]
    }

    public func jwks(extra: [[String: String]] = []) throws -> Data {
        let primitives = try rsa.publicKey.getKeyPrimitives()
        let keys: [[String: String]] =
            [
                ecJWK(),
                ["kty": "OKP", "crv": "Ed25519", "kid": "ed-1", "x": Self.base64URL(ed.publicKey.rawRepresentation)],
                ["kty": "RSA", "kid": "rsa-1", "n": Self.base64URL(primitives.modulus), "e": Self.base64URL(primitives.publicExponent)],
            ] + extra
        return try JSONSerialization.data(withJSONObject: ["keys": keys], options: [.sortedKeys])
    }

    /// Claims valid at `now` (milliseconds) for `sub`, an hour long, with `changes` applied
    /// (`NSNull()` removes a claim).
    public static func claims(sub: String = "alice", now: Int64, _ changes: [String: Any] = [:]) -> [String: Any] {
        var claims: [String: Any] = ["sub": sub, "iss": issuer, "aud": audience, "iat": now / 1000, "exp": now / 1000 + 3600]
        for (key, value) in changes { claims[key] = value is NSNull ? nil : value }
        return claims
    }

    public enum Signer: Sendable { case ec, ed, rsa, hmac(Data), none }

    /// A JWT of `claims` with the header's `alg` and `kid`, signed by `signer`.
    public func token(
        _ claims: [String: Any], alg: String, kid: String?, signer: Signer, ecKey: P256.Signing.PrivateKey? = nil, crit: [String]? = nil
    ) throws -> String {
        var header: [String: Any] = ["alg": alg, "typ": "JWT"]
        header["kid"] = kid
        header["crit"] = crit
        let input =
            Self.base64URL(try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys])) + "."
            + Self.base64URL(try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys]))
        let data = Data(input.utf8)
        let signature: Data
        switch signer {
        case .ec: signature = try (ecKey ?? ec).signature(for: data).rawRepresentation
        case .ed: signature = try ed.signature(for: data)
        case .rsa: signature = try rsa.signature(for: data, padding: .insecurePKCS1v1_5).rawRepresentation
        case .hmac(let key): signature = Data(HMAC<SHA256>.authenticationCode(for: data, using: SymmetricKey(data: key)))
        case .none: signature = Data()
        }
        return input + "." + Self.base64URL(signature)
    }
}

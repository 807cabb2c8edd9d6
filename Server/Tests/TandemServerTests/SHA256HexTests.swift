import Testing
@testable import TandemServer

/// Push keys and stored token hashes: SHA-256 as hex, and the constant-time check of a
/// presented token against its stored hash.
struct SHA256HexTests {
    @Test func digestsMatchTheStandardVectors() {
        #expect(SHA256Hex.of([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256Hex.of(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            SHA256Hex.of(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        // Around the padding's block boundaries (values from Python's hashlib).
        #expect(SHA256Hex.of([UInt8](repeating: UInt8(ascii: "a"), count: 55)) == "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318")
        #expect(SHA256Hex.of([UInt8](repeating: UInt8(ascii: "a"), count: 64)) == "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb")
    }

    @Test func aTokenMatchesOnlyTheHashOfItsOwnSecret() {
        let token = APIToken.generate()
        let other = APIToken.generate()
        #expect(token.matches(secretHash: token.secretHash))
        #expect(token.matches(secretHash: token.secretHash.uppercased()))
        #expect(!token.matches(secretHash: other.secretHash))
        // One digit off, too short, not hex: no match, no crash.
        var digits = Array(token.secretHash)
        digits[63] = digits[63] == "0" ? "1" : "0"
        #expect(!token.matches(secretHash: String(digits)))
        #expect(!token.matches(secretHash: String(token.secretHash.dropLast())))
        #expect(!token.matches(secretHash: String(repeating: "z", count: 64)))
        #expect(!token.matches(secretHash: ""))
    }
}

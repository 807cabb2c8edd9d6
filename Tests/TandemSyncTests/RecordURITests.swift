import Foundation
import Testing
import TandemWire

/// The record-URI reader the server and the pull share: its parts, a lowercase id, and
/// refusals.
@Suite("Record URIs")
struct RecordURITests {
    @Test func readsDatasetEntityAndALowercaseID() {
        let parsed = RecordURI("tandem://todos/Todo/6F1C5D0E-8A4B-4C55-9B43-3F6C1F7A2B10")
        #expect(parsed?.dataset == "todos" && parsed?.entity == "Todo" && parsed?.id == "6f1c5d0e-8a4b-4c55-9b43-3f6c1f7a2b10")
        #expect(parsed?.text == "tandem://todos/Todo/6f1c5d0e-8a4b-4c55-9b43-3f6c1f7a2b10")
        // Whether the text was canonical already is known, and not part of the identity.
        let lower = RecordURI("tandem://todos/Todo/6f1c5d0e-8a4b-4c55-9b43-3f6c1f7a2b10")
        #expect(parsed?.wasCanonical == false && lower?.wasCanonical == true)
        #expect(parsed == lower && Set([parsed, lower]).count == 1)
        // A substring's bytes are read too (not contiguous in a native string of its own).
        let long = "xtandem://todos/Todo/6f1c5d0e-8a4b-4c55-9b43-3f6c1f7a2b10"
        #expect(RecordURI(String(long.dropFirst())) == lower)
    }

    @Test(arguments: [
        "", "tandem://", "tandem:///Todo/6f1c5d0e-8a4b-4c55-9b43-3f6c1f7a2b10", "tandem://todos//6f1c5d0e-8a4b-4c55-9b43-3f6c1f7a2b10",
        "tandem://todos/Todo/", "tandem://todos/Todo/6f1c5d0e-8a4b-4c55-9b43-3f6c1f7a2b1", "tandem://todos/Todo/6f1c5d0e-8a4b-4c55-9b43-3f6c1f7a2b10/x",
        "tandem://todos/Todo/6f1c5d0e+8a4b-4c55-9b43-3f6c1f7a2b10", "tandem://todos/Todo/6f1c5d0e-8a4b-4c55-9b43-3f6c1f7a2g10",
        "http://todos/Todo/6f1c5d0e-8a4b-4c55-9b43-3f6c1f7a2b10", "tandem://todos/Todo/6f1c5d0e-8a4b-4c55-9b43-3f6c1f7a2b10é",
    ])
    func refusesWhatIsNotARecordURI(_ uri: String) {
        #expect(RecordURI(uri) == nil)
    }

    /// Random ids, some with one character replaced: a valid id reads as Foundation's
    /// lowercase form; a replaced character outside the id grammar is refused (stricter
    /// than Foundation's scanf-based parsing, which accepts some of them).
    @Test func readsRandomIDsAndRefusesMangledOnes() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("0123456789abcdefABCDEFxg-")
        for _ in 0..<2_000 {
            let uuid = UUID()
            var id = Array(uuid.uuidString)
            var valid = true
            if Bool.random(using: &generator) {
                let offset = Int.random(in: 0..<id.count, using: &generator)
                let replacement = alphabet.randomElement(using: &generator)!
                id[offset] = replacement
                valid = [8, 13, 18, 23].contains(offset) ? replacement == "-" : replacement.isHexDigit
            }
            let parsed = RecordURI("tandem://d/E/" + String(id))?.id
            if valid {
                #expect(parsed == UUID(uuidString: String(id))?.uuidString.lowercased(), "\(String(id))")
            } else {
                #expect(parsed == nil, "\(String(id))")
            }
        }
    }
}

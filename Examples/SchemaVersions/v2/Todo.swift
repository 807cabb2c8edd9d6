// The next release as first written: two changes break sync with release 1.
// `tandem schema check` refuses it (exit code 1) and says how to fix each change.
import Foundation
import Tandem

struct People: Codable {
    var name: String
    var age: Int64  // was Int: the same width on 64-bit platforms, but 32-bit clients overflow (warning)
    var email: String  // new required field: release-1 clients never send it (breaking)
}

enum Priority: String, Codable, CaseIterable {  // raw type was Int (breaking)
    case low, normal, high
}

@Model final class Todo {
    @Attribute(.unique) var code: String
    var title: String
    var people: People
    var priority: Priority = .normal
    var note: String?  // a new optional attribute: safe
    init(code: String, title: String, people: People) {
        self.code = code
        self.title = title
        self.people = people
    }
}

// Release 1 of an app's models: `tandem schema extract` records it as the released schema.
// (Not part of any build target: the schema demo reads it as source.)
import Foundation
import Tandem

struct People: Codable {
    var name: String
    var age: Int
}

enum Priority: Int, Codable, CaseIterable {
    case low, normal, high
}

@Model final class Todo {
    @Attribute(.unique) var code: String
    var title: String
    var people: People
    var priority: Priority = .normal
    init(code: String, title: String, people: People) {
        self.code = code
        self.title = title
        self.people = people
    }
}

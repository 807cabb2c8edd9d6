public import Testing
public import TandemSchema

// Shared by the schema checker's tests and the server's schema registry tests.

/// One v1/v2 pair of Swift sources per rule: the change must be reported with exactly this
/// rule ID, verdict and path.
public struct RuleCase: CustomTestStringConvertible, Sendable {
    public var rule: String
    public var verdict: Verdict
    public var path: String
    public var v1: String
    public var v2: String
    public var testDescription: String { "\(rule) (\(verdict.rawValue)) at \(path)" }
}

/// `@Model final class Note { <members> }` plus extra declarations.
public func note(_ members: String, _ extra: String = "") -> String {
    """
    import Tandem
    \(extra)
    @Model final class Note {
        \(members)
        init() {}
    }
    """
}

public let base = "var title: String = \"\""

public let ruleCases: [RuleCase] = [
    RuleCase(rule: "ENTITY_ADDED", verdict: .safe, path: "Folder", v1: note(base), v2: note(base, "@Model final class Folder { var name: String = \"\" }")),
    RuleCase(rule: "ENTITY_REMOVED", verdict: .breaking, path: "Folder", v1: note(base, "@Model final class Folder { var name: String = \"\" }"), v2: note(base)),
    // Renamed without originalName: a new entity to old clients.
    RuleCase(
        rule: "ENTITY_RENAMED", verdict: .breaking, path: "Folder",
        v1: note(base, "@Model final class Folder { var name: String = \"\" }"), v2: note(base, "@Model final class Directory { var name: String = \"\" }")),
    // Declared: its records keep syncing as Folder.
    RuleCase(
        rule: "ENTITY_RENAMED", verdict: .safe, path: "Directory",
        v1: note(base, "@Model final class Folder { var name: String = \"\" }"),
        v2: note(base, "@Model(originalName: \"Folder\") final class Directory { var name: String = \"\" }")),
    // Renamed again, the first name kept.
    RuleCase(
        rule: "ENTITY_RENAMED", verdict: .safe, path: "Box",
        v1: note(base, "@Model(originalName: \"Folder\") final class Directory { var name: String = \"\" }"),
        v2: note(base, "@Model(originalName: \"Folder\") final class Box { var name: String = \"\" }")),
    // Back to its first name.
    RuleCase(
        rule: "ENTITY_RENAMED", verdict: .safe, path: "Folder",
        v1: note(base, "@Model(originalName: \"Folder\") final class Directory { var name: String = \"\" }"),
        v2: note(base, "@Model final class Folder { var name: String = \"\" }")),
    // Renamed again, and a new model takes the middle name: the renamed one is still Folder.
    RuleCase(
        rule: "ENTITY_RENAMED", verdict: .safe, path: "Box",
        v1: note(base, "@Model(originalName: \"Folder\") final class Directory { var name: String = \"\" }"),
        v2: note(base, "@Model(originalName: \"Folder\") final class Box { var name: String = \"\" }\n@Model final class Directory { var size: Int = 0 }")),
    // The originalName dropped: its records would sync as Directory.
    RuleCase(
        rule: "ENTITY_RENAMED", verdict: .breaking, path: "Directory",
        v1: note(base, "@Model(originalName: \"Folder\") final class Directory { var name: String = \"\" }"),
        v2: note(base, "@Model final class Directory { var name: String = \"\" }")),
    // Renamed again with the previous name as originalName.
    RuleCase(
        rule: "ENTITY_RENAMED", verdict: .breaking, path: "Box",
        v1: note(base, "@Model(originalName: \"Folder\") final class Directory { var name: String = \"\" }"),
        v2: note(base, "@Model(originalName: \"Directory\") final class Box { var name: String = \"\" }")),
    RuleCase(rule: "ATTRIBUTE_ADDED_OPTIONAL", verdict: .safe, path: "Note.body", v1: note(base), v2: note(base + "\nvar body: String?")),
    RuleCase(rule: "ATTRIBUTE_ADDED_WITH_DEFAULT", verdict: .warning, path: "Note.pinned", v1: note(base), v2: note(base + "\nvar pinned: Bool = false")),
    RuleCase(rule: "ATTRIBUTE_ADDED_REQUIRED", verdict: .breaking, path: "Note.rank", v1: note(base), v2: note(base + "\nvar rank: Int")),
    RuleCase(rule: "ATTRIBUTE_REMOVED", verdict: .breaking, path: "Note.body", v1: note(base + "\nvar body: String?"), v2: note(base)),
    RuleCase(
        rule: "ATTRIBUTE_RENAMED", verdict: .safe, path: "Note.heading",
        v1: note(base), v2: note("@Attribute(originalName: \"title\") var heading: String = \"\"")),
    // Renamed again, the first name kept: still what it syncs under.
    RuleCase(
        rule: "ATTRIBUTE_RENAMED", verdict: .safe, path: "Note.caption",
        v1: note("@Attribute(originalName: \"title\") var heading: String = \"\""), v2: note("@Attribute(originalName: \"title\") var caption: String = \"\"")),
    // The originalName dropped once the rename is done (as after a SwiftData migration): what
    // it syncs under changes.
    RuleCase(
        rule: "ATTRIBUTE_RENAMED", verdict: .breaking, path: "Note.heading",
        v1: note("@Attribute(originalName: \"title\") var heading: String = \"\""), v2: note("var heading: String = \"\"")),
    // Back to its first name: still what it syncs under.
    RuleCase(
        rule: "ATTRIBUTE_RENAMED", verdict: .safe, path: "Note.title",
        v1: note("@Attribute(originalName: \"title\") var heading: String = \"\""), v2: note(base)),
    // Renamed again with the previous name: it would sync under another name.
    RuleCase(
        rule: "ATTRIBUTE_RENAMED", verdict: .breaking, path: "Note.caption",
        v1: note("@Attribute(originalName: \"title\") var heading: String = \"\""), v2: note("@Attribute(originalName: \"heading\") var caption: String = \"\"")),
    RuleCase(rule: "ATTRIBUTE_TYPE_CHANGED", verdict: .breaking, path: "Note.title", v1: note(base), v2: note("var title: Int = 0")),
    RuleCase(rule: "ATTRIBUTE_TYPE_CHANGED", verdict: .warning, path: "Note.count", v1: note("var count: Int = 0"), v2: note("var count: Int64 = 0")),
    RuleCase(rule: "ATTRIBUTE_NUMERIC_WIDENED", verdict: .breaking, path: "Note.count", v1: note("var count: Int32 = 0"), v2: note("var count: Int64 = 0")),
    RuleCase(rule: "ATTRIBUTE_NUMERIC_WIDENED", verdict: .breaking, path: "Note.score", v1: note("var score: Float = 0"), v2: note("var score: Double = 0")),
    RuleCase(rule: "ATTRIBUTE_NUMERIC_NARROWED", verdict: .breaking, path: "Note.count", v1: note("var count: Int64 = 0"), v2: note("var count: Int32 = 0")),
    RuleCase(rule: "ATTRIBUTE_OPTIONAL_TO_REQUIRED", verdict: .breaking, path: "Note.body", v1: note("var body: String?"), v2: note("var body: String")),
    RuleCase(rule: "ATTRIBUTE_REQUIRED_TO_OPTIONAL", verdict: .breaking, path: "Note.body", v1: note("var body: String"), v2: note("var body: String?")),
    RuleCase(rule: "ATTRIBUTE_REQUIRED_TO_OPTIONAL", verdict: .warning, path: "Note.body", v1: note("var body: String = \"\""), v2: note("var body: String?")),
    RuleCase(rule: "ATTRIBUTE_DEFAULT_CHANGED", verdict: .warning, path: "Note.rank", v1: note("var rank: Int = 0"), v2: note("var rank: Int = 5")),
    RuleCase(rule: "UNIQUE_ADDED", verdict: .breaking, path: "Note.title", v1: note(base), v2: note("@Attribute(.unique) " + base)),
    RuleCase(rule: "UNIQUE_REMOVED", verdict: .warning, path: "Note.title", v1: note("@Attribute(.unique) " + base), v2: note(base)),
    RuleCase(rule: "INDEX_CHANGED", verdict: .safe, path: "Note.title", v1: note(base), v2: note("@Attribute(.indexed) " + base)),
    RuleCase(rule: "PRESERVE_ON_DELETION_CHANGED", verdict: .warning, path: "Note.title", v1: note(base), v2: note("@Attribute(.preserveValueOnDeletion) " + base)),
    RuleCase(
        rule: "COMPOSITE_FIELD_ADDED", verdict: .warning, path: "Note.people.email",
        v1: note("var people: People", "struct People: Codable { var name: String }"),
        v2: note("var people: People", "struct People: Codable { var name: String; var email: String? }")),
    RuleCase(
        rule: "COMPOSITE_FIELD_ADDED", verdict: .breaking, path: "Note.people.age",
        v1: note("var people: People", "struct People: Codable { var name: String }"),
        v2: note("var people: People", "struct People: Codable { var name: String; var age: Int }")),
    RuleCase(
        rule: "COMPOSITE_FIELD_REMOVED", verdict: .breaking, path: "Note.people.age",
        v1: note("var people: People", "struct People: Codable { var name: String; var age: Int }"),
        v2: note("var people: People", "struct People: Codable { var name: String }")),
    RuleCase(
        rule: "COMPOSITE_FIELD_RENAMED", verdict: .breaking, path: "Note.people.age",
        v1: note("var people: People", "struct People: Codable { var name: String; var age: Int }"),
        v2: note("var people: People", "struct People: Codable { var name: String; var years: Int }")),
    RuleCase(
        rule: "COMPOSITE_FIELD_RETYPED", verdict: .breaking, path: "Note.people.age",
        v1: note("var people: People", "struct People: Codable { var name: String; var age: Int }"),
        v2: note("var people: People", "struct People: Codable { var name: String; var age: String }")),
    RuleCase(
        rule: "COMPOSITE_FIELD_RETYPED", verdict: .breaking, path: "Note.people.geo.lat",
        v1: note("var people: People", "struct Geo: Codable { var lat: Double }\nstruct People: Codable { var geo: Geo }"),
        v2: note("var people: People", "struct Geo: Codable { var lat: Double? }\nstruct People: Codable { var geo: Geo }")),
    RuleCase(
        rule: "COMPOSITE_FIELD_RETYPED", verdict: .warning, path: "Note.people.age",
        v1: note("var people: People", "struct People: Codable { var age: Int }"),
        v2: note("var people: People", "struct People: Codable { var age: Int64 }")),
    RuleCase(
        rule: "COMPOSITE_TYPE_RENAMED", verdict: .safe, path: "Note.people",
        v1: note("var people: People", "struct People: Codable { var name: String }"),
        v2: note("var people: Person", "struct Person: Codable { var name: String }")),
    RuleCase(rule: "STORAGE_SHAPE_CHANGED", verdict: .breaking, path: "Note.title", v1: note(base), v2: note("var title: [String] = []")),
    RuleCase(
        rule: "STORAGE_SHAPE_CHANGED", verdict: .breaking, path: "Note.people",
        v1: note("var people: People", "struct People: Codable { var name: String }"), v2: note("var people: String = \"\"")),
    RuleCase(
        rule: "ENUM_RAW_TYPE_CHANGED", verdict: .breaking, path: "Note.priority",
        v1: note("var priority: Priority = .low", "enum Priority: Int, Codable, CaseIterable { case low, high }"),
        v2: note("var priority: Priority = .low", "enum Priority: String, Codable, CaseIterable { case low, high }")),
    RuleCase(
        rule: "ENUM_CASE_RAW_VALUE_CHANGED", verdict: .breaking, path: "Note.priority.high",
        v1: note("var priority: Priority = .low", "enum Priority: Int, Codable, CaseIterable { case low, high }"),
        v2: note("var priority: Priority = .low", "enum Priority: Int, Codable, CaseIterable { case low, high = 5 }")),
    RuleCase(
        rule: "ENUM_CASE_REMOVED", verdict: .breaking, path: "Note.priority.high",
        v1: note("var priority: Priority = .low", "enum Priority: String, Codable, CaseIterable { case low, high }"),
        v2: note("var priority: Priority = .low", "enum Priority: String, Codable, CaseIterable { case low }")),
    RuleCase(
        rule: "ENUM_CASE_ADDED", verdict: .warning, path: "Note.priority.urgent",
        v1: note("var priority: Priority = .low", "enum Priority: String, Codable, CaseIterable { case low, high }"),
        v2: note("var priority: Priority = .low", "enum Priority: String, Codable, CaseIterable { case low, high, urgent }")),
    // The style of the seed articles: raw values, not CaseIterable. The sources list the
    // cases all the same.
    RuleCase(
        rule: "ENUM_CASE_REMOVED", verdict: .breaking, path: "Note.kind.three",
        v1: note("var kind: MyType = .one", "enum MyType: Int, Codable { case one, two, three }"),
        v2: note("var kind: MyType = .one", "enum MyType: Int, Codable { case one, two }")),
    RuleCase(
        rule: "ENUM_CASE_ADDED", verdict: .warning, path: "Note.kind.four",
        v1: note("var kind: MyType = .one", "enum MyType: Int, Codable { case one, two, three }"),
        v2: note("var kind: MyType = .one", "enum MyType: Int, Codable { case one, two, three, four }")),
    RuleCase(
        rule: "ENUM_CASE_RAW_VALUE_CHANGED", verdict: .breaking, path: "Note.kind.three",
        v1: note("var kind: MyType = .one", "enum MyType: Int, Codable { case one, two, three }"),
        v2: note("var kind: MyType = .one", "enum MyType: Int, Codable { case one, two, three = 7 }")),
    // A RawRepresentable struct stores raw values whose cases no declaration lists.
    RuleCase(
        rule: "ENUM_CASES_UNKNOWN", verdict: .warning, path: "Note.priority",
        v1: note("var priority: Priority = .low", "enum Priority: String, Codable, CaseIterable { case low, high }"),
        v2: note(
            "var priority: Priority = Priority(rawValue: \"low\")",
            "struct Priority: RawRepresentable, Codable { var rawValue: String; init(rawValue: String) { self.rawValue = rawValue } }")),
    RuleCase(
        rule: "ENUM_WITHOUT_RAW_VALUE_CHANGED", verdict: .breaking, path: "Note.shape",
        v1: note("var shape: Shape = .dot", "enum Shape: Codable { case dot, circle(radius: Double) }"),
        v2: note("var shape: Shape = .dot", "enum Shape: Codable { case dot, circle(radius: Double), square(side: Double) }")),
    RuleCase(
        rule: "COLLECTION_ELEMENT_FIELD_ADDED", verdict: .safe, path: "Note.links.title",
        v1: note("var links: [Link] = []", "struct Link: Codable { var url: URL }"),
        v2: note("var links: [Link] = []", "struct Link: Codable { var url: URL; var title: String? }")),
    RuleCase(
        rule: "COLLECTION_ELEMENT_FIELD_ADDED", verdict: .breaking, path: "Note.links.rank",
        v1: note("var links: [Link] = []", "struct Link: Codable { var url: URL }"),
        v2: note("var links: [Link] = []", "struct Link: Codable { var url: URL; var rank: Int }")),
    RuleCase(
        rule: "COLLECTION_ELEMENT_FIELD_REMOVED", verdict: .breaking, path: "Note.links.title",
        v1: note("var links: [Link] = []", "struct Link: Codable { var url: URL; var title: String }"),
        v2: note("var links: [Link] = []", "struct Link: Codable { var url: URL }")),
    RuleCase(
        rule: "COLLECTION_ELEMENT_FIELD_RENAMED", verdict: .breaking, path: "Note.links.title",
        v1: note("var links: [Link] = []", "struct Link: Codable { var url: URL; var title: String }"),
        v2: note("var links: [Link] = []", "struct Link: Codable { var url: URL; var caption: String }")),
    RuleCase(
        rule: "COLLECTION_ELEMENT_FIELD_RETYPED", verdict: .breaking, path: "Note.links.title",
        v1: note("var links: [Link] = []", "struct Link: Codable { var url: URL; var title: String }"),
        v2: note("var links: [Link] = []", "struct Link: Codable { var url: URL; var title: Int }")),
    RuleCase(rule: "COLLECTION_TYPE_CHANGED", verdict: .breaking, path: "Note.tags", v1: note("var tags: [String] = []"), v2: note("var tags: Set<String> = []")),
    RuleCase(
        rule: "RELATIONSHIP_ADDED", verdict: .safe, path: "Note.folder",
        v1: note(base, "@Model final class Folder { var name: String = \"\" }"),
        v2: note(base + "\nvar folder: Folder?", "@Model final class Folder { var name: String = \"\" }")),
    RuleCase(
        rule: "RELATIONSHIP_REMOVED", verdict: .breaking, path: "Note.folder",
        v1: note(base + "\nvar folder: Folder?", "@Model final class Folder { var name: String = \"\" }"),
        v2: note(base, "@Model final class Folder { var name: String = \"\" }")),
    RuleCase(
        rule: "RELATIONSHIP_RENAMED", verdict: .breaking, path: "Note.parent",
        v1: note(base + "\nvar folder: Folder?", "@Model final class Folder { var name: String = \"\" }"),
        v2: note(base + "\n@Relationship(originalName: \"folder\") var parent: Folder?", "@Model final class Folder { var name: String = \"\" }")),
    RuleCase(
        rule: "RELATIONSHIP_CARDINALITY_CHANGED", verdict: .breaking, path: "Note.folder",
        v1: note(base + "\nvar folder: Folder?", "@Model final class Folder { var name: String = \"\" }"),
        v2: note(base + "\nvar folder: [Folder] = []", "@Model final class Folder { var name: String = \"\" }")),
    RuleCase(
        rule: "RELATIONSHIP_TARGET_CHANGED", verdict: .breaking, path: "Note.folder",
        v1: note(base + "\nvar folder: Folder?", "@Model final class Folder { var name: String = \"\" }\n@Model final class Box { var name: String = \"\" }"),
        v2: note(base + "\nvar folder: Box?", "@Model final class Folder { var name: String = \"\" }\n@Model final class Box { var name: String = \"\" }")),
    RuleCase(
        rule: "RELATIONSHIP_DELETE_RULE_CHANGED", verdict: .warning, path: "Note.folder",
        v1: note(base + "\nvar folder: Folder?", "@Model final class Folder { var name: String = \"\" }"),
        v2: note(base + "\n@Relationship(deleteRule: .cascade) var folder: Folder?", "@Model final class Folder { var name: String = \"\" }")),
    RuleCase(
        rule: "RELATIONSHIP_DELETE_RULE_CHANGED", verdict: .breaking, path: "Note.folder",
        v1: note(base + "\nvar folder: Folder?", "@Model final class Folder { var name: String = \"\" }"),
        v2: note(base + "\n@Relationship(deleteRule: .deny) var folder: Folder?", "@Model final class Folder { var name: String = \"\" }")),
    RuleCase(
        rule: "RELATIONSHIP_INVERSE_CHANGED", verdict: .breaking, path: "Note.folder",
        v1: note(base + "\nvar folder: Folder?", "@Model final class Folder { var notes: [Note] = [] }"),
        v2: note(base + "\nvar folder: Folder?", "@Model final class Folder { var notes: [Note] = []; var pinned: [Note] = [] }")),
]

import Tandem

struct People: Codable, Equatable, Hashable {
    var name: String
    var age: Int
}

struct Geo: Codable, Equatable {
    var lat: Double
    var lon: Double
}

struct Address: Codable, Equatable {
    var city: String
    var geo: Geo
    var zip: String?
    var lines: [String] = []
}

enum Priority: Int, Codable, CaseIterable {
    case low, normal, high
}

enum Status: String, Codable, CaseIterable {
    case open, done
}

enum Shape: Codable, Equatable {
    case circle(radius: Double)
    case square(side: Double)
}

@Model final class Todo {
    @Attribute(.unique) var code: String
    var title: String
    var people: People
    var tags: [String] = []
    var priority: Priority = .normal
    var weight: Double?
    var done = false
    @Attribute(originalName: "created") var timestamp: Date = Date(timeIntervalSince1970: 1_000)
    @Transient var scratch = 0
    var isHeavy: Bool { (weight ?? 0) > 80 }

    init(code: String, title: String, people: People, priority: Priority = .normal, weight: Double? = nil, tags: [String] = []) {
        self.code = code
        self.title = title
        self.people = people
        self.priority = priority
        self.weight = weight
        self.tags = tags
    }
}

@Model final class Item {
    var name: String
    @Attribute(.indexed) var position: Int = 0
    init(name: String) { self.name = name }
}

/// Every scalar of the storage mapping, optional and not, plus composites and JSON values.
@Model final class AllTypes {
    var int: Int = 0
    var int8: Int8 = 0
    var int16: Int16 = 0
    var int32: Int32 = 0
    var int64: Int64 = 0
    var uint: UInt = 0
    var uint8: UInt8 = 0
    var uint16: UInt16 = 0
    var uint32: UInt32 = 0
    var uint64: UInt64 = 0
    var bool: Bool = false
    var double: Double = 0
    var float: Float = 0
    var string: String = ""
    var date: Date = Date(timeIntervalSince1970: 0)
    var uuid: UUID = UUID()
    var data: Data = Data()
    var url: URL = URL(string: "https://example.com")!
    var decimal: Decimal = 0
    var optionalInt: Int?
    var optionalBool: Bool?
    var optionalDouble: Double?
    var optionalString: String?
    var optionalDate: Date?
    var optionalUUID: UUID?
    var optionalData: Data?
    var optionalURL: URL?
    var optionalDecimal: Decimal?
    var address: Address = Address(city: "", geo: Geo(lat: 0, lon: 0))
    var optionalAddress: Address?
    var status: Status = .open
    var optionalStatus: Status?
    var shape: Shape = .circle(radius: 1)
    var optionalShape: Shape?
    var numbers: Set<Int> = []
    var scores: [String: Int] = [:]

    init() {}
}

@Model final class Student {
    var name: String
    var birthOfYear: Int
    init(name: String, birthOfYear: Int) {
        self.name = name
        self.birthOfYear = birthOfYear
    }
}

enum V1 {
    @Model final class Note {
        var title: String
        init(title: String) { self.title = title }
    }
}

enum V2 {
    @Model final class Note {
        @Attribute(originalName: "title") var heading: String
        var body: String?
        var pinned: Bool = true
        var people: People = People(name: "nobody", age: 0)
        init(heading: String) { self.heading = heading }
    }
}

/// V1.Note with a removed-and-required change: refused.
enum V3Bad {
    @Model final class Note {
        var title: Int
        init(title: Int) { self.title = title }
    }
}

enum V5 {
    @Model final class Note {
        @Attribute(.indexed) var title: String
        init(title: String) { self.title = title }
    }
}

enum V4Bad {
    struct People: Codable { var name: String; var years: Int }
    @Model final class Note {
        var title: String
        var people: People = People(name: "", years: 0)
        init(title: String) { self.title = title }
    }
}

/// Collections of dates and UUIDs, a Decimal and an optional string, for predicate edge cases.
@Model final class Schedule {
    var name: String
    var dates: [Date] = []
    var ids: [UUID] = []
    var price: Decimal = 0
    var nickname: String?
    init(name: String) { self.name = name }
}

/// A composite with every kind of optional field and a `Date`: the fetch path reads each in
/// one step (``CompositeFieldTests``).
struct Byline: Codable, Equatable {
    var name: String
    var email: String?
    var rank: Int?
    var score: Double?
    var since: Date
    var until: Date?
    var status: Status?
    var geo: Geo?
}

@Model final class Story {
    var title: String
    var author: Byline
    var status: Status
    var section: Priority?
    var editor: UUID?

    init(title: String, author: Byline, status: Status, section: Priority?, editor: UUID?) {
        self.title = title
        self.author = author
        self.status = status
        self.section = section
        self.editor = editor
    }
}

import Foundation
import Testing
@testable import Tandem

// The modelling patterns of the seed articles (shared/seeds), written as they are there.

/// Optional numerics, and a validated type exposed through a computed property over a
/// stored raw property.
@Model final class Person {
    var weight: Double?
    private var nameRaw: String = ""

    var name: ValidatedName {
        get { ValidatedName(trust: nameRaw) }
        set { nameRaw = newValue.rawValue }
    }

    init(name: ValidatedName, weight: Double? = nil) {
        self.nameRaw = name.rawValue
        self.weight = weight
    }
}

struct ValidatedName: Equatable {
    enum NameError: Error { case empty }
    let rawValue: String
    init(_ name: String) throws {
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw NameError.empty }
        rawValue = trimmed
    }
    init(trust value: String) { rawValue = value }
}

/// A composite enum content computed over several private raw attributes, and multi-select
/// options kept as an Int64 bit mask.
@Model final class ItemData {
    var createTimestamp: Date
    private var kind: Int16 = 0
    private var eventDate: Date?
    private var value1: Double?
    private var optionID: UUID?
    private var optionIDsNumber: Int64 = 0

    init(createTimestamp: Date, dataContent: ItemDataContent) {
        self.createTimestamp = createTimestamp
        self.dataContent = dataContent
    }

    var dataContent: ItemDataContent? {
        get {
            switch kind {
            case 1: eventDate.flatMap { date in value1.map { .singleValue(eventDate: date, value: $0) } }
            case 2: eventDate.flatMap { date in optionID.map { .singleOption(eventDate: date, optionID: $0) } }
            default: nil
            }
        }
        set {
            switch newValue {
            case .singleValue(let date, let value): kind = 1; eventDate = date; value1 = value; optionID = nil
            case .singleOption(let date, let option): kind = 2; eventDate = date; optionID = option; value1 = nil
            case nil: kind = 0; eventDate = nil; value1 = nil; optionID = nil
            }
        }
    }

    var optionSelections: [Int] {
        get { (0..<64).filter { optionIDsNumber & (1 << Int64($0)) != 0 } }
        set { optionIDsNumber = optionIDsToInt64(newValue) }
    }
}

enum ItemDataContent: Equatable {
    case singleValue(eventDate: Date, value: Double)
    case singleOption(eventDate: Date, optionID: UUID)
}

func optionIDsToInt64(_ ids: [Int]) -> Int64 {
    ids.reduce(Int64(0)) { $1 >= 0 && $1 <= 63 ? $0 | (1 << Int64($1)) : $0 }
}

@Suite("Seed article patterns")
struct SeedPatternTests {
    @Test func optionalDoubleDistinguishesNoValueFromZero() throws {
        let container = try memoryContainer(Person.self)
        let context = ModelContext(container)
        context.insert(Person(name: try ValidatedName("Ann"), weight: nil))
        context.insert(Person(name: try ValidatedName("Bob"), weight: 0))
        try context.save()
        let unweighed = try ModelContext(container).fetch(FetchDescriptor<Person>(predicate: #Predicate { $0.weight == nil }))
        #expect(unweighed.map(\.name) == [try ValidatedName("Ann")])
        let zero = try ModelContext(container).fetch(FetchDescriptor<Person>(predicate: #Predicate { $0.weight == 0 }))
        #expect(zero.map(\.name.rawValue) == ["Bob"])
    }

    @Test func validatedTypeOverAStoredRawProperty() throws {
        let container = try memoryContainer(Person.self)
        let context = ModelContext(container)
        let person = Person(name: try ValidatedName("  Ann  "))
        context.insert(person)
        try context.save()
        person.name = try ValidatedName("Annie")
        try context.save()
        let stored = try container.read { db in try String.fetchOne(db, sql: #"SELECT "nameRaw" FROM "Person""#) }
        #expect(stored == "Annie")
        #expect(try ModelContext(container).fetch(FetchDescriptor<Person>()).first?.name == (try ValidatedName("Annie")))
        #expect(throws: ValidatedName.NameError.empty) { _ = try ValidatedName("   ") }
    }

    @Test func compositeEnumContentOverPrivateRawAttributes() throws {
        let container = try memoryContainer(ItemData.self)
        let context = ModelContext(container)
        let option = UUID()
        let date = Date(timeIntervalSince1970: 5_000)
        context.insert(ItemData(createTimestamp: date, dataContent: .singleValue(eventDate: date, value: 98.6)))
        context.insert(ItemData(createTimestamp: date, dataContent: .singleOption(eventDate: date, optionID: option)))
        try context.save()
        let contents = try ModelContext(container).fetch(FetchDescriptor<ItemData>(sortBy: [SortDescriptor(\.createTimestamp)])).map(\.dataContent)
        #expect(contents.contains(.singleValue(eventDate: date, value: 98.6)))
        #expect(contents.contains(.singleOption(eventDate: date, optionID: option)))
        let columns = try container.read { db in try db.columns(in: "ItemData").map(\.name) }
        #expect(columns.contains("kind") && columns.contains("value1") && columns.contains("optionID"))
    }

    @Test func multiSelectBitMaskIsQueriedInSQL() throws {
        let container = try memoryContainer(ItemData.self)
        let context = ModelContext(container)
        let date = Date(timeIntervalSince1970: 0)
        let selections: [[Int]] = [[2, 3, 10], [1, 6], [2, 3, 6, 10, 12], [3]]
        for (i, selection) in selections.enumerated() {
            let item = ItemData(createTimestamp: date.addingTimeInterval(Double(i)), dataContent: .singleValue(eventDate: date, value: 1))
            item.optionSelections = selection
            context.insert(item)
        }
        try context.save()
        let mask = optionIDsToInt64([2, 3, 10])
        let found = try ModelContext(container).fetch(
            FetchDescriptor<ItemData>(
                sqlFilter: #"("optionIDsNumber" & ?) = ?"#, arguments: [mask, mask],
                sortBy: [SortDescriptor(\.createTimestamp)]))
        #expect(found.map(\.optionSelections) == [[2, 3, 10], [2, 3, 6, 10, 12]])
    }

    @Test func studentsGroupedByBirthYearCountInSQL() throws {
        let container = try memoryContainer(Student.self)
        let context = ModelContext(container)
        for (name, year) in [("a", 2000), ("b", 2001), ("c", 2000), ("d", 1999)] {
            context.insert(Student(name: name, birthOfYear: year))
        }
        try context.save()
        let byYear: [Int: Int] = try ModelContext(container).fetchCount(FetchDescriptor<Student>(), groupedBy: \.birthOfYear)
        #expect(byYear == [2000: 2, 2001: 1, 1999: 1])
    }
}

import Foundation
import Testing
@testable import Tandem

/// Every row of the storage mapping can be queried, not only round-tripped.
@Suite("Every mapping row is queryable")
struct ScalarQueryTests {
    let container: ModelContainer
    let uuid = UUID()

    init() throws {
        container = try memoryContainer(AllTypes.self)
        let context = ModelContext(container)
        let a = AllTypes(), b = AllTypes()
        a.int8 = 5; a.uint = 7; a.bool = true; a.float = 2.5; a.string = "alpha"; a.date = Date(timeIntervalSince1970: 100)
        a.uuid = uuid; a.url = URL(string: "https://a.example")!; a.decimal = Decimal(string: "1.25")!
        a.optionalInt = 3; a.address = Address(city: "Oslo", geo: Geo(lat: 59.9, lon: 10.7))
        a.optionalAddress = Address(city: "Rome", geo: Geo(lat: 41.9, lon: 12.5))
        a.status = .done; a.optionalStatus = .open; a.numbers = [1, 2]; a.scores = ["x": 1]
        a.data = Data([1, 2, 3])
        context.insert(a)
        context.insert(b)
        try context.save()
    }

    func count(_ predicate: Predicate<AllTypes>) throws -> Int {
        try ModelContext(container).fetchCount(FetchDescriptor(predicate: predicate))
    }

    @Test func integersBoolsAndFloats() throws {
        #expect(try count(#Predicate { $0.int8 == 5 }) == 1)
        #expect(try count(#Predicate { $0.uint > 6 }) == 1)
        #expect(try count(#Predicate { $0.bool }) == 1)
        #expect(try count(#Predicate { $0.float > 2 }) == 1)
    }

    @Test func textDatesUUIDsURLsAndDecimals() throws {
        #expect(try count(#Predicate { $0.string == "alpha" }) == 1)
        let date = Date(timeIntervalSince1970: 100)
        #expect(try count(#Predicate { $0.date == date }) == 1)
        let id = uuid
        #expect(try count(#Predicate { $0.uuid == id }) == 1)
        let url = URL(string: "https://a.example")!
        #expect(try count(#Predicate { $0.url == url }) == 1)
        let decimal = Decimal(string: "1.25")!
        #expect(try count(#Predicate { $0.decimal == decimal }) == 1)
        let data = Data([1, 2, 3])
        #expect(try count(#Predicate { $0.data == data }) == 1)
    }

    @Test func optionalsAndOptionalComposites() throws {
        #expect(try count(#Predicate { $0.optionalInt == 3 }) == 1)
        #expect(try count(#Predicate { $0.optionalInt == nil }) == 1)
        #expect(try count(#Predicate { $0.optionalAddress?.city == "Rome" }) == 1)
        #expect(try count(#Predicate { $0.optionalAddress == nil }) == 1)
    }

    @Test func nestedCompositeLeaves() throws {
        #expect(try count(#Predicate { $0.address.geo.lat > 50 }) == 1)
        #expect(try count(#Predicate { $0.address.city == "Oslo" }) == 1)
    }

    @Test func stringEnumsAndJSONCollections() throws {
        let done = Status.done
        #expect(try count(#Predicate { $0.status == done }) == 1)
        let open = Status.open
        #expect(try count(#Predicate { $0.optionalStatus == open }) == 1)
        #expect(try count(#Predicate { $0.numbers.contains(2) }) == 1)
        #expect(try count(#Predicate { $0.scores.isEmpty }) == 1)
    }
}

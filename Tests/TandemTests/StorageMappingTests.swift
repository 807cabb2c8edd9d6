import Foundation
import Testing
@testable import Tandem

@Suite("Storage mapping")
struct StorageMappingTests {
    @Test func everyScalarRoundTripsThroughAFile() throws {
        let dir = TemporaryDirectory()
        let uuid = UUID()
        do {
            let container = try ModelContainer(for: AllTypes.self, configurations: ModelConfiguration(url: dir.file()))
            let context = ModelContext(container)
            let value = AllTypes()
            value.int = -42; value.int8 = -8; value.int16 = -16; value.int32 = -32; value.int64 = .min
            value.uint = 42; value.uint8 = 255; value.uint16 = 65535; value.uint32 = .max; value.uint64 = UInt64(Int64.max)
            value.bool = true; value.double = 3.25; value.float = 1.5; value.string = "héllo \"quoted\" ✓"
            value.date = Date(timeIntervalSince1970: 1_700_000_000.5); value.uuid = uuid
            value.data = Data([0, 1, 2, 255]); value.url = URL(string: "https://example.com/a?b=c")!
            value.decimal = Decimal(string: "12345.678901234567890")!
            value.optionalInt = 7; value.optionalBool = false; value.optionalDouble = 0.5; value.optionalString = ""
            value.optionalDate = Date(timeIntervalSince1970: 10); value.optionalUUID = uuid; value.optionalData = Data()
            value.optionalURL = URL(string: "file:///tmp/x")!; value.optionalDecimal = Decimal(1)
            value.address = Address(city: "Oslo", geo: Geo(lat: 59.9, lon: 10.7), zip: nil, lines: ["a", "b"])
            value.optionalAddress = Address(city: "Rome", geo: Geo(lat: 41.9, lon: 12.5), zip: "00100")
            value.status = .done; value.optionalStatus = .open
            value.shape = .square(side: 2); value.optionalShape = .circle(radius: 3)
            value.numbers = [3, 1, 2]; value.scores = ["a": 1, "b": 2]
            context.insert(value)
            try context.save()
        }
        let container = try ModelContainer(for: AllTypes.self, configurations: ModelConfiguration(url: dir.file()))
        let fetched = try #require(try ModelContext(container).fetch(FetchDescriptor<AllTypes>()).first)
        #expect(fetched.int == -42)
        #expect(fetched.int8 == -8)
        #expect(fetched.int16 == -16)
        #expect(fetched.int32 == -32)
        #expect(fetched.int64 == .min)
        #expect(fetched.uint == 42)
        #expect(fetched.uint8 == 255)
        #expect(fetched.uint16 == 65535)
        #expect(fetched.uint32 == .max)
        #expect(fetched.uint64 == UInt64(Int64.max))
        #expect(fetched.bool == true)
        #expect(fetched.double == 3.25)
        #expect(fetched.float == 1.5)
        #expect(fetched.string == "héllo \"quoted\" ✓")
        #expect(fetched.date == Date(timeIntervalSince1970: 1_700_000_000.5))
        #expect(fetched.uuid == uuid)
        #expect(fetched.data == Data([0, 1, 2, 255]))
        #expect(fetched.url == URL(string: "https://example.com/a?b=c")!)
        #expect(fetched.decimal == Decimal(string: "12345.678901234567890")!)
        #expect(fetched.optionalInt == 7)
        #expect(fetched.optionalBool == false)
        #expect(fetched.optionalDouble == 0.5)
        #expect(fetched.optionalString == "")
        #expect(fetched.optionalDate == Date(timeIntervalSince1970: 10))
        #expect(fetched.optionalUUID == uuid)
        #expect(fetched.optionalData == Data())
        #expect(fetched.optionalURL == URL(string: "file:///tmp/x")!)
        #expect(fetched.optionalDecimal == Decimal(1))
        #expect(fetched.address == Address(city: "Oslo", geo: Geo(lat: 59.9, lon: 10.7), zip: nil, lines: ["a", "b"]))
        #expect(fetched.optionalAddress == Address(city: "Rome", geo: Geo(lat: 41.9, lon: 12.5), zip: "00100"))
        #expect(fetched.status == .done)
        #expect(fetched.optionalStatus == .open)
        #expect(fetched.shape == .square(side: 2))
        #expect(fetched.optionalShape == .circle(radius: 3))
        #expect(fetched.numbers == [1, 2, 3])
        #expect(fetched.scores == ["a": 1, "b": 2])
    }

    @Test func nilOptionalsRoundTripAsNull() throws {
        let container = try memoryContainer(AllTypes.self)
        let context = ModelContext(container)
        context.insert(AllTypes())
        try context.save()
        let fetched = try #require(try ModelContext(container).fetch(FetchDescriptor<AllTypes>()).first)
        #expect(fetched.optionalInt == nil)
        #expect(fetched.optionalString == nil)
        #expect(fetched.optionalAddress == nil)
        #expect(fetched.optionalShape == nil)
        #expect(fetched.optionalStatus == nil)
        #expect(fetched.optionalUUID == nil)
        let nulls = try container.read { db in
            try Row.fetchOne(db, sql: #"SELECT "optionalInt" IS NULL AS a, "optionalAddress" IS NULL AS b, "optionalAddress.city" IS NULL AS c FROM "AllTypes""#)
        }
        let flags: [Bool] = ["a", "b", "c"].map { nulls?[$0] ?? false }
        #expect(flags == [true, true, true])
    }

    @Test func columnsAreReadableAndCompositeLeavesAreDotted() throws {
        let container = try memoryContainer(Todo.self)
        let columns = try container.read { db in try db.columns(in: "Todo").map(\.name) }
        #expect(columns == ["#id", "code", "title", "people.name", "people.age", "tags", "priority", "weight", "done", "timestamp", "#hlc"])
        let types = try container.read { db in try db.columns(in: "Todo").map(\.type) }
        #expect(types == ["TEXT", "TEXT", "TEXT", "TEXT", "INTEGER", "TEXT", "INTEGER", "REAL", "INTEGER", "REAL", "TEXT"])
    }

    @Test func valuesAreStoredInTheDocumentedForms() throws {
        let container = try memoryContainer(Todo.self)
        let context = ModelContext(container)
        let todo = Todo(code: "X", title: "t", people: people("Ann", 3), priority: .high, tags: ["a"])
        todo.timestamp = Date(timeIntervalSince1970: 86_400)
        context.insert(todo)
        try context.save()
        let row = try #require(try container.read { db in try Row.fetchOne(db, sql: #"SELECT * FROM "Todo""#) })
        #expect(row["#id"] == UUIDText.string(todo.persistentModelID.uuid))
        #expect((row["#id"] as String).lowercased() == row["#id"])
        #expect(row["priority"] == 2)
        #expect(row["people.age"] == 3)
        #expect(row["tags"] == #"["a"]"#)
        #expect(row["timestamp"] == 86_400.0)
    }

    @Test func compositeFieldsAreQueryableInRawSQL() throws {
        let container = try memoryContainer(Todo.self)
        let context = ModelContext(container)
        _ = try seededTodos(context)
        let adults = try container.read { db in
            try String.fetchAll(db, sql: #"SELECT code FROM "Todo" WHERE "people.age" >= 18 ORDER BY code"#)
        }
        #expect(adults == ["A", "C", "D"])
    }

    @Test func transientAndComputedPropertiesAreNotStored() throws {
        let schema = try Schema([Todo.self])
        let names = try #require(schema.entity(named: "Todo")).attributes.map(\.name)
        #expect(!names.contains("scratch"))
        #expect(!names.contains("isHeavy"))
        let container = try memoryContainer(Todo.self)
        let context = ModelContext(container)
        let todo = Todo(code: "A", title: "a", people: people("A", 1))
        todo.scratch = 99
        context.insert(todo)
        try context.save()
        let again = try #require(try ModelContext(container).fetch(FetchDescriptor<Todo>()).first)
        #expect(again.scratch == 0)
    }

    @Test func uint64AboveInt64MaxIsRefusedWithoutWriting() throws {
        let container = try memoryContainer(AllTypes.self)
        let context = ModelContext(container)
        let value = AllTypes()
        value.uint64 = .max
        context.insert(value)
        #expect {
            try context.save()
        } throws: { error in
            (error as? StoreError)?.code == .invalidValue && (error as? StoreError)?.attribute == "uint64"
        }
        #expect(try container.read { db in try Int.fetchOne(db, sql: #"SELECT COUNT(*) FROM "AllTypes""#) } == 0)
    }

    @Test func aValueEditedOutsideTandemIsATypedErrorOnFetch() throws {
        let container = try memoryContainer(Todo.self)
        let context = ModelContext(container)
        _ = try seededTodos(context)
        try container.write { db in try db.execute(sql: #"UPDATE "Todo" SET "priority" = 9 WHERE code = 'A'"#) }
        #expect {
            _ = try ModelContext(container).fetch(FetchDescriptor<Todo>())
        } throws: { error in
            let error = error as? StoreError
            return error?.code == .invalidValue && error?.attribute == "priority" && error?.message.contains("raw value 9") == true
        }
    }
}

/// Decodes field by field (so it is a composite) but encodes as a list: a shape the columns
/// cannot hold. Saving must fail with a typed error, not crash.
struct Lopsided: Codable, Equatable {
    var a: Int
    var b: Int
    init(a: Int, b: Int) { self.a = a; self.b = b }
    func encode(to encoder: any Encoder) throws {
        var list = encoder.unkeyedContainer()
        try list.encode(a)
        try list.encode(b)
    }
}

@Model final class LopsidedHolder {
    var value: Lopsided = Lopsided(a: 1, b: 2)
    init() {}
}

@Suite("Composite encoding errors")
struct CompositeEncodingErrorTests {
    @Test func aCompositeThatEncodesAsAListIsATypedErrorOnSave() throws {
        let container = try memoryContainer(LopsidedHolder.self)
        let context = ModelContext(container)
        context.insert(LopsidedHolder())
        #expect {
            try context.save()
        } throws: { error in
            let error = error as? StoreError
            return error?.code == .invalidValue && error?.attribute == "value" && error?.message.contains("encodes as a list") == true
        }
        #expect(try container.read { db in try Int.fetchOne(db, sql: #"SELECT COUNT(*) FROM "LopsidedHolder""#) } == 0)
    }
}

import Foundation
import Testing
import TandemSchema
import TandemWire

/// A page read for a bulk apply holds exactly the entries the pull reader reads: plain inserts
/// of shaped entities as rows, everything else as entries, and the same errors.
@Suite("Bulk page reader")
struct BulkPageReaderTests {
    static let shapes = [BulkPage.Shape(entity: "Tag", columns: ["name"]), BulkPage.Shape(entity: "Todo", columns: ["done", "rank", "title"])]
    static let id = "6f1c5d0e-8a4b-4c55-9b43-3f6c1f7a2b10"
    static let stamp = "0190a1b2c3d4-0001-00000000000000aa"
    static let later = "0190a1b2c3d5-0000-00000000000000bb"

    static func entry(_ change: String, position: Int = 1) -> String {
        #"{"change":\#(change),"position":\#(position),"schemaVersion":2}"#
    }

    static func page(_ entries: [String]) -> Data {
        Data(#"{"changes":[\#(entries.joined(separator: ","))],"hasMore":true,"nextCursor":"c1.x","serverTime":9}"#.utf8)
    }

    static func insert(
        record: String = "tandem://todos/Todo/\(id)", entity: String = "Todo", stamps: String = #"{"*":"\#(stamp)"}"#,
        values: String = #"{"done":false,"rank":3,"title":"a \"b\""}"#
    ) -> String {
        #"{"entity":"\#(entity)","kind":"insert","record":"\#(record)","stamps":\#(stamps),"values":\#(values)}"#
    }

    /// Each change, and whether it is read as a row.
    static let cases: [(change: String, row: Bool)] = [
        (insert(), true),
        (insert(stamps: #"{"*":"\#(stamp)","rank":"\#(later)"}"#), true),
        (insert(values: #"{"title":"t","rank":-1,"done":true}"#), true),  // any order
        (insert(values: #"{"done":null,"rank":1.5,"title":{"bytes":"AAE="}}"#), true),
        (insert(record: "tandem://todos/Tag/\(id)", entity: "Tag", values: #"{"name":"é"}"#), true),
        (insert(values: #"{"done":false,"rank":3}"#), false),  // a column missing
        (insert(values: #"{"done":false,"rank":3,"title":"x","note":"n"}"#), false),  // a newer schema's
        (insert(stamps: #"{"rank":"\#(later)"}"#), false),  // no "*"
        (insert(stamps: #"{"*":"\#(stamp)","note":"\#(later)"}"#), false),
        (insert(record: "tandem://todos/Todo/\(id.uppercased())"), false),
        (insert(record: "tandem://other/Todo/\(id)"), false),
        (insert(record: "tandem://todos/Tag/\(id)"), false),
        (insert(record: "tandem://todos/Note/\(id)", entity: "Note"), false),
        (insert(values: #"{"d\u006fne":false,"rank":3,"title":"x"}"#), false),  // an escaped name
        (#"{"record":"tandem://todos/Todo/\#(id)","entity":"Todo","kind":"insert","stamps":{"*":"\#(stamp)"},"values":{"done":false,"rank":3,"title":"a"}}"#, false),
        (#"{"entity":"Todo","kind":"update","record":"tandem://todos/Todo/\#(id)","stamps":{"*":"\#(stamp)"},"values":{"done":true}}"#, false),
        (#"{"entity":"Todo","kind":"delete","record":"tandem://todos/Todo/\#(id)","stamps":{"*":"\#(stamp)"},"values":{}}"#, false),
        (#"{"entity":"Todo","kind":"delete","mergedInto":"tandem://todos/Todo/\#(id)","record":"tandem://todos/Todo/\#(id)","stamps":{"*":"\#(stamp)"},"values":{}}"#, false),
        (#"{"entity":"Tag","kind":"link","record":"tandem://todos/Tag/\#(id)","stamps":{"*":"\#(stamp)"},"values":{"todos":"\#(id)"}}"#, false),
    ]

    @Test func rowsAreTheEntriesThePullReaderReads() throws {
        let data = Self.page(Self.cases.enumerated().map { Self.entry($0.element.change, position: $0.offset + 1) })
        let expected = try WireJSONReader.pullResponse(data)
        let page = try WireJSONReader.bulkPage(data, dataset: "todos", shapes: Self.shapes)
        #expect(page.hasMore == expected.hasMore && page.nextCursor == expected.nextCursor && page.serverTime == expected.serverTime)
        #expect(page.items.count == Self.cases.count)
        for (index, item) in page.items.enumerated() {
            switch item {
            case .row(let row):
                #expect(Self.cases[index].row, "case \(index) read as a row")
                #expect(row.entry(dataset: "todos", shape: Self.shapes[row.shape]) == expected.changes[index], "case \(index)")
            case .entry(let entry):
                #expect(!Self.cases[index].row, "case \(index) not read as a row")
                #expect(entry == expected.changes[index], "case \(index)")
            }
        }
    }

    @Test func brokenPagesFailAsThePullReaderFails() {
        let broken = [
            Self.insert(values: #"{"done":false,"done":true,"rank":3,"title":"x"}"#),  // a repeated key
            Self.insert(values: #"{"done":false,"rank":3,"title":"x}"#),  // a string not closed
            Self.insert(values: #"{"done":fals,"rank":3,"title":"x"}"#),
            Self.insert(values: #"{"done":false,"rank":3,"title":{"bytes":"!!"}}"#),
            Self.insert(stamps: #"{"*":"\#(Self.stamp)","*":"\#(Self.later)"}"#),
            #"{"entity":"Todo","kind":"insert","record":"tandem://todos/Todo/\#(Self.id)","stamps":{"*":"\#(Self.stamp)"}}"#,  // no values
        ]
        for change in broken {
            let data = Self.page([Self.entry(Self.insert()), Self.entry(change)])
            var expected: WireDecodingError?
            do { _ = try WireJSONReader.pullResponse(data) } catch { expected = error }
            #expect(expected != nil, "\(change)")
            #expect(throws: expected!) { try WireJSONReader.bulkPage(data, dataset: "todos", shapes: Self.shapes) }
        }
    }
}

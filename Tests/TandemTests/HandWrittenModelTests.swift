import Foundation
import Testing
@testable import Tandem

/// A model conforming to PersistentModel by hand, without the macro.
final class Bookmark: PersistentModel {
    var persistentState = PersistentState()
    private let registrar = ObservationRegistrar()

    var url: URL { didSet { persistentDidChange(0) } }
    var visits: Int { didSet { persistentDidChange(1) } }

    init(url: URL, visits: Int = 0) {
        self.url = url
        self.visits = visits
    }

    static var schemaMetadata: [PropertyMetadata] {
        [
            PropertyMetadata(\Bookmark.url, name: "url", options: [.unique]),
            PropertyMetadata(\Bookmark.visits, name: "visits", defaultValue: "0", makeDefault: { 0 }),
        ]
    }

    init(persistentRow row: PersistentRow) throws {
        url = try row.decode(at: 0)
        visits = try row.decode(at: 1)
    }

    func encodePersistentValues(to row: inout PersistentRowWriter) throws {
        try row.encode(url, at: 0)
        try row.encode(visits, at: 1)
    }

    func refreshPersistentValues(from row: PersistentRow) throws {
        url = try row.decode(at: 0)
        visits = try row.decode(at: 1)
        persistentState.changes.removeAll()
    }
}

@Suite("Hand-written conformance")
struct HandWrittenModelTests {
    @Test func aModelWrittenWithoutTheMacroIsStoredAndQueried() throws {
        let container = try memoryContainer(Bookmark.self)
        let context = ModelContext(container)
        let bookmark = Bookmark(url: URL(string: "https://swift.org")!)
        context.insert(bookmark)
        try context.save()
        bookmark.visits = 3
        #expect(context.hasChanges)
        try context.save()
        let fetched = try ModelContext(container).fetch(FetchDescriptor<Bookmark>(predicate: #Predicate { $0.visits > 2 }))
        #expect(fetched.map(\.url.absoluteString) == ["https://swift.org"])
        let schema = try Schema([Bookmark.self])
        #expect(schema.entity(named: "Bookmark")?.attribute(named: "url")?.isUnique == true)
    }
}

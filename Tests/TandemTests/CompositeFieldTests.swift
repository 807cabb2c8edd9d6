import Foundation
import Testing
@testable import Tandem

/// Composite fields and enum attributes as fetched: optional fields present and absent,
/// dates, enums inside and outside a composite, and the errors a bad stored value gives.
@Suite("Composite fields and enums on fetch")
struct CompositeFieldTests {
    static let full = Byline(
        name: "Ann", email: "ann@example.com", rank: 3, score: 0.5, since: Date(timeIntervalSince1970: 1_600_000_000.25),
        until: Date(timeIntervalSince1970: 1_700_000_000), status: .done, geo: Geo(lat: 1, lon: 2))
    static let bare = Byline(name: "Bob", email: nil, rank: nil, score: nil, since: Date(timeIntervalSince1970: 0), until: nil, status: nil, geo: nil)

    @Test func optionalFieldsPresentAndAbsentRoundTrip() throws {
        let dir = TemporaryDirectory()
        let editor = UUID()
        do {
            let container = try ModelContainer(for: Story.self, configurations: ModelConfiguration(url: dir.file()))
            let context = ModelContext(container)
            context.insert(Story(title: "full", author: Self.full, status: .open, section: .high, editor: editor))
            context.insert(Story(title: "bare", author: Self.bare, status: .done, section: nil, editor: nil))
            try context.save()
        }
        let container = try ModelContainer(for: Story.self, configurations: ModelConfiguration(url: dir.file()))
        let stories = try ModelContext(container).fetch(FetchDescriptor<Story>(sortBy: [SortDescriptor(\.title)]))
        #expect(stories.map(\.title) == ["bare", "full"])
        #expect(stories[0].author == Self.bare && stories[0].status == .done && stories[0].section == nil && stories[0].editor == nil)
        #expect(stories[1].author == Self.full && stories[1].status == .open && stories[1].section == .high && stories[1].editor == editor)
    }

    @Test(arguments: [
        (#"UPDATE "Story" SET "status" = 'lost'"#, "Status has no case with raw value lost"),
        (#"UPDATE "Story" SET "section" = 9"#, "Priority has no case with raw value 9"),
        (#"UPDATE "Story" SET "author.status" = 'gone'"#, "Status has no case with raw value gone"),
    ])
    func aBadStoredValueIsATypedErrorNamingTheAttribute(_ sql: String, _ reason: String) throws {
        let dir = TemporaryDirectory()
        let container = try ModelContainer(for: Story.self, configurations: ModelConfiguration(url: dir.file()))
        let context = ModelContext(container)
        context.insert(Story(title: "t", author: Self.full, status: .open, section: .low, editor: nil))
        try context.save()
        try container.write(author: "test") { db in try db.execute(sql: sql) }  // not through a model
        let error = #expect(throws: StoreError.self) { try ModelContext(container).fetch(FetchDescriptor<Story>()) }
        #expect(error?.code == .invalidValue)
        #expect(error?.message.contains(reason) == true, "\(error?.message ?? "")")
    }
}

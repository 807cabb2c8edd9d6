import Foundation
import Testing
@testable import Tandem

@Suite("Change journal")
struct JournalTests {
    func container(_ types: any PersistentModel.Type..., clock: SteppingClock = SteppingClock(), url: URL? = nil) throws -> ModelContainer {
        var configuration = url.map { ModelConfiguration(url: $0, dataset: "ledger") } ?? ModelConfiguration(isStoredInMemoryOnly: true, dataset: "ledger")
        configuration.clock = clock.clock
        return try ModelContainer(for: types, configurations: [configuration])
    }

    @Test func insertRecordsEveryColumnWithAuthorContextAndStamp() throws {
        let clock = SteppingClock()
        let container = try container(Todo.self, clock: clock)
        let context = ModelContext(container)
        context.author = "importer"
        context.name = "main"
        let todo = Todo(code: "T-1", title: "Write", people: people("Ann", 31), priority: .high, weight: 2.5, tags: ["a"])
        context.insert(todo)
        try context.save()

        let history = try context.fetchHistory(HistoryDescriptor())
        let transaction = try #require(history.only)
        #expect(transaction.author == "importer")
        #expect(transaction.contextName == "main")
        #expect(transaction.processName.contains("[\(ProcessInfo.processInfo.processIdentifier)]"))
        #expect(transaction.timestamp == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(transaction.stamp.physical == 1_700_000_000_000)
        let change = try #require(transaction.changes.only)
        #expect(change.kind == .insert)
        #expect(change.persistentModelID == todo.persistentModelID)
        #expect(change.persistentModelID.description.hasPrefix("tandem://ledger/Todo/"))
        #expect(
            change.values == [
                "code": .text("T-1"), "title": .text("Write"), "people.name": .text("Ann"), "people.age": .integer(31),
                "tags": .text("[\"a\"]"), "priority": .integer(2), "weight": .real(2.5), "done": .integer(0),
                "timestamp": .real(1_000),
            ])
        #expect(Set(change.stamps.keys) == Set(change.values.keys))
        #expect(change.stamps.values.allSatisfy { $0 == transaction.stamp })
    }

    @Test func updateRecordsOnlyTheChangedColumnsAndStampsThem() throws {
        let clock = SteppingClock()
        let container = try container(Todo.self, clock: clock)
        let context = ModelContext(container)
        let todo = Todo(code: "T-1", title: "Write", people: people("Ann", 31))
        context.insert(todo)
        try context.save()
        clock.set(1_700_000_005_000)
        todo.title = "Rewrite"
        todo.people.age = 32
        try context.save()

        let history = try context.fetchHistory(HistoryDescriptor())
        #expect(history.count == 2)
        let update = try #require(history.last?.changes.only)
        #expect(update.kind == .update)
        // A composite's leaves are journaled one by one: only the one that changed.
        #expect(update.values == ["title": .text("Rewrite"), "people.age": .integer(32)])
        #expect(update.stamp.physical == 1_700_000_005_000)
        #expect(history[0].token < history[1].token)

        // The store keeps the latest stamp per column.
        let stamps = try container.read { db in try String.fetchOne(db, sql: ##"SELECT "#hlc" FROM "Todo""##) }
        let decoded = try JSONDecoder().decode([String: HLCTimestamp].self, from: Data(try #require(stamps).utf8))
        #expect(decoded["title"] == update.stamp)
        #expect(decoded["*"] == history[0].stamp)
        #expect(decoded["code"] == nil)
    }

    @Test func updateWithoutChangesWritesNoEntry() throws {
        let container = try container(Todo.self)
        let context = ModelContext(container)
        let todo = Todo(code: "T-1", title: "Write", people: people("Ann", 31))
        context.insert(todo)
        try context.save()
        todo.title = "Write"  // same value
        try context.save()
        try container.write { db in try db.execute(sql: #"UPDATE "Todo" SET "title" = 'Write'"#) }
        try container.write { db in try db.execute(sql: #"UPDATE "Todo" SET "title" = 'x' WHERE 0"#) }
        #expect(try context.fetchHistory(HistoryDescriptor()).count == 1)
    }

    @Test func deleteRecordsATombstoneWithKeyAndPreservedValues() throws {
        let container = try container(LedgerEntry.self)
        let context = ModelContext(container)
        let entry = LedgerEntry(code: "L-1", title: "Rent", amount: 900)
        entry.note = "gone with the record"
        context.insert(entry)
        try context.save()
        let id = entry.persistentModelID
        context.delete(entry)
        try context.save()

        let delete = try #require(try context.fetchHistory(HistoryDescriptor()).last?.changes.only)
        #expect(delete.kind == .delete)
        #expect(delete.persistentModelID == id)
        #expect(delete.tombstone == ["code": .text("L-1"), "title": .text("Rent")])
        #expect(delete.stamp > .zero)
    }

    @Test func wideEntitiesAreJournaledPastSQLitesArgumentLimit() throws {
        let container = try container(AllTypes.self)
        let context = ModelContext(container)
        let model = AllTypes()
        context.insert(model)
        try context.save()
        model.optionalString = "set"
        model.address.geo.lat = 1.5
        try context.save()
        let history = try context.fetchHistory(HistoryDescriptor())
        let columns = try container.read { db in try db.columns(in: "AllTypes").count }
        #expect(history.first?.changes.only?.values.count == columns - 2)  // all but #id and #hlc
        let update = try #require(history.last?.changes.only)
        #expect(update.values["optionalString"] == .text("set"))
        #expect(update.values["address.geo.lat"] == .real(1.5))
        #expect(update.values["address.city"] == nil)  // only the leaf that changed
        #expect(update.values["int"] == nil)
    }

    @Test func realsAndBlobsRoundTripExactly() throws {
        let container = try container(LedgerEntry.self)
        let context = ModelContext(container)
        let entry = LedgerEntry(code: "L-1", title: "Odd", amount: 0.1 + 0.2)
        entry.attachment = Data([0, 1, 0xfe, 0xff])
        entry.note = #"{"$blob":"00"} is only text"#
        context.insert(entry)
        try context.save()
        entry.amount = 1e300
        try context.save()
        let history = try context.fetchHistory(HistoryDescriptor())
        let insert = try #require(history.first?.changes.only)
        #expect(insert.values["amount"] == .real(0.30000000000000004))
        #expect(insert.values["attachment"] == .blob(Data([0, 1, 0xfe, 0xff])))
        #expect(insert.values["note"] == .text(#"{"$blob":"00"} is only text"#))
        #expect(history.last?.changes.only?.values == ["amount": .real(1e300)])
    }

    @Test func rawSQLWritesAreJournaledWithTheirAuthor() throws {
        let container = try container(LedgerEntry.self)
        try container.write(author: "script") { db in
            try db.execute(sql: ##"INSERT INTO "LedgerEntry" ("#id", code, title, amount) VALUES ('6f1c5d0e-8a4b-4c55-9b43-3f6c1f7a2b10', 'R-1', 'raw', 1.5)"##)
            try db.execute(sql: #"UPDATE "LedgerEntry" SET amount = 2 WHERE code = 'R-1'"#)
        }
        try container.write(author: "sync") { db in
            try db.execute(sql: #"DELETE FROM "LedgerEntry""#)
        }
        let history = try container.fetchHistory(HistoryDescriptor())
        #expect(history.map(\.author) == ["script", "sync"])
        #expect(history[0].changes.map(\.kind) == [.insert, .update])
        #expect(history[0].changes[0].values["title"] == .text("raw"))
        #expect(history[0].changes[1].values == ["amount": .real(2)])  // REAL column affinity
        #expect(history[1].changes.map(\.kind) == [.delete])
        #expect(history[1].changes[0].persistentModelID.description == "tandem://ledger/LedgerEntry/6f1c5d0e-8a4b-4c55-9b43-3f6c1f7a2b10")
        // The raw insert got stamps like a model insert.
        #expect(history[0].changes[0].stamps["title"] == history[0].stamp)
        #expect(history[0].changes[1].stamps["amount"] == history[0].stamp)
        // A failed raw write leaves neither rows nor history.
        #expect(throws: (any Error).self) {
            try container.write { db in
                try db.execute(sql: ##"INSERT INTO "LedgerEntry" ("#id", code, title, amount) VALUES ('7f1c5d0e-8a4b-4c55-9b43-3f6c1f7a2b10', 'R-2', 'x', 1)"##)
                throw StoreError(.misuse, "abort")
            }
        }
        #expect(try container.fetchHistory(HistoryDescriptor()).count == 2)
    }

    @Test func cascadesForeignKeysAndJoinRowsAreJournaled() throws {
        let container = try container(Category.self, Article.self, ArticleCollection.self, Tag.self)
        let context = ModelContext(container)
        let collection = ArticleCollection(name: "c")
        let category = Category(name: "news")
        let tag = Tag(label: "swift")
        let article = Article(title: "a")
        context.insert(collection)
        context.insert(article)
        article.collection = collection
        article.category = category
        article.tags = [tag]
        try context.save()
        let inserted = try #require(try context.fetchHistory(HistoryDescriptor()).last)
        let articleInsert = try #require(inserted.changes.first { $0.entityName == "Article" })
        #expect(articleInsert.values["category"] == .text(UUIDText.string(category.persistentModelID.uuid)))
        #expect(articleInsert.values["collection"] == .text(UUIDText.string(collection.persistentModelID.uuid)))
        let link = try #require(inserted.changes.first { $0.kind == .link })
        #expect(link.entityName == "Article")
        #expect(link.persistentModelID == article.persistentModelID)
        #expect(link.values == ["tags": .text(UUIDText.string(tag.persistentModelID.uuid))])

        article.category = nil
        article.tags = []
        try context.save()
        let edited = try #require(try context.fetchHistory(HistoryDescriptor()).last)
        #expect(edited.changes.contains { $0.kind == .update && $0.values == ["category": .null] })
        #expect(edited.changes.contains { $0.kind == .unlink && $0.values == ["tags": .text(UUIDText.string(tag.persistentModelID.uuid))] })

        context.delete(collection)  // cascades to the article
        try context.save()
        let deleted = try #require(try context.fetchHistory(HistoryDescriptor()).last)
        #expect(Set(deleted.changes.filter { $0.kind == .delete }.map(\.entityName)) == ["ArticleCollection", "Article"])

        // Replaying the journal gives exactly the tables.
        let history = try context.fetchHistory(HistoryDescriptor())
        let replayed = replay(history)
        for entity in ["Category", "Article", "ArticleCollection", "Tag"] {
            let table = try tableState(container, entity: entity)
            #expect(replayed.filter { $0.key.contains("/\(entity)/") } == table)
        }
    }

    @Test func historyFiltersByAuthorEntityTokenAndLimit() throws {
        let container = try container(Todo.self, LedgerEntry.self)
        let context = ModelContext(container)
        context.author = "app"
        context.insert(Todo(code: "T-1", title: "t", people: people("A", 1)))
        try context.save()
        context.author = "sync"
        context.insert(LedgerEntry(code: "L-1", title: "l", amount: 1))
        try context.save()
        context.author = nil
        context.insert(Todo(code: "T-2", title: "t", people: people("B", 2)))
        try context.save()

        var descriptor = HistoryDescriptor()
        descriptor.authors = ["sync"]
        #expect(try context.fetchHistory(descriptor).map(\.author) == ["sync"])
        descriptor = HistoryDescriptor()
        descriptor.excludedAuthors = ["sync"]
        #expect(try context.fetchHistory(descriptor).map(\.author) == ["app", nil])
        descriptor = HistoryDescriptor()
        descriptor.entityNames = ["LedgerEntry"]
        #expect(try context.fetchHistory(descriptor).flatMap(\.changes).map(\.entityName) == ["LedgerEntry"])
        let all = try context.fetchHistory(HistoryDescriptor())
        #expect(try context.fetchHistory(HistoryDescriptor(after: all[0].token)).map(\.token) == [all[1].token, all[2].token])
        descriptor = HistoryDescriptor(after: .start)
        descriptor.fetchLimit = 1
        #expect(try context.fetchHistory(descriptor).map(\.token) == [all[0].token])
        #expect(try container.currentHistoryToken() == all[2].token)
    }

    @Test func aLargeTransactionIsReadInSlicesOfItsChanges() throws {
        let container = try container(Todo.self, LedgerEntry.self)
        let context = ModelContext(container)
        for n in 0..<10 { context.insert(LedgerEntry(code: "L-\(n)", title: "l", amount: Double(n))) }
        try context.save()  // one transaction of 10 changes
        context.insert(LedgerEntry(code: "L-10", title: "l", amount: 10))
        try context.save()
        let whole = try context.fetchHistory(HistoryDescriptor()).flatMap(\.changes).map(\.id)
        var slices: [[Int64]] = []
        var descriptor = HistoryDescriptor()
        descriptor.changeLimit = 4
        while true {
            let slice = try context.fetchHistory(descriptor)
            guard let last = slice.last?.changes.last else { break }
            slices.append(slice.flatMap(\.changes).map(\.id))
            descriptor.afterChange = last.id
        }
        #expect(slices.map(\.count) == [4, 4, 3], "the third slice ends the big transaction and holds the small one")
        #expect(slices.flatMap { $0 } == whole)
        descriptor = HistoryDescriptor()
        descriptor.afterChange = whole[9]
        #expect(try context.fetchHistory(descriptor).map(\.changes.count) == [1], "a fully read transaction is skipped")
    }

    @Test func tokensStrictlyIncreaseAcrossReopenAndAfterDeletingHistory() throws {
        let directory = TemporaryDirectory()
        var tokens: [HistoryToken] = []
        for round in 0..<3 {
            let container = try container(Todo.self, url: directory.file())
            let context = ModelContext(container)
            context.insert(Todo(code: "T-\(round)", title: "t", people: people("A", round)))
            try context.save()
            tokens.append(contentsOf: try context.fetchHistory(HistoryDescriptor()).map(\.token))
            // Delete everything: the next token must still be larger.
            try context.deleteHistory(before: HistoryToken(rawValue: .max))
            #expect(try context.fetchHistory(HistoryDescriptor()).isEmpty)
        }
        #expect(tokens.count == 3)
        #expect(tokens == tokens.sorted() && Set(tokens).count == 3)
    }

    @Test func deleteHistoryKeepsWhatARegisteredReaderHasNotAcknowledged() throws {
        let container = try container(Todo.self)
        let context = ModelContext(container)
        try container.registerHistoryReader("sync")
        for i in 0..<5 {
            context.insert(Todo(code: "T-\(i)", title: "t", people: people("A", i)))
            try context.save()
        }
        let tokens = try context.fetchHistory(HistoryDescriptor()).map(\.token)
        #expect(try context.deleteHistory(before: tokens[4]) == 0)
        try container.acknowledgeHistory(through: tokens[1], reader: "sync")
        #expect(try context.deleteHistory(before: tokens[4]) == 2)
        #expect(try context.fetchHistory(HistoryDescriptor()).map(\.token) == Array(tokens[2...]))
        // Acknowledgements never move back; a second reader holds history too.
        try container.acknowledgeHistory(through: tokens[0], reader: "sync")
        #expect(try container.historyReaders() == [HistoryReader(name: "sync", acknowledged: tokens[1])])
        try container.registerHistoryReader("exporter", acknowledged: tokens[2])
        try container.acknowledgeHistory(through: tokens[4], reader: "sync")
        #expect(try context.deleteHistory(before: tokens[4]) == 1)
        #expect(try context.fetchHistory(HistoryDescriptor()).map(\.token) == [tokens[3], tokens[4]])
        try container.unregisterHistoryReader("exporter")
        #expect(try context.deleteHistory(before: tokens[4]) == 1)
        #expect(throws: StoreError.self) { try container.acknowledgeHistory(through: tokens[4], reader: "nobody") }
    }

    @Test func aBareSQLiteConnectionCannotWriteUnjournaledChanges() throws {
        let directory = TemporaryDirectory()
        do {
            let container = try container(Todo.self, url: directory.file())
            let context = ModelContext(container)
            context.insert(Todo(code: "T-1", title: "t", people: people("A", 1)))
            try context.save()
        }
        let queue = try DatabaseQueue(path: directory.file().path)
        #expect(throws: DatabaseError.self) {
            try queue.write { db in try db.execute(sql: #"UPDATE "Todo" SET title = 'sneaky'"#) }
        }
        #expect(try queue.read { db in try String.fetchOne(db, sql: #"SELECT title FROM "Todo""#) } == "t")
    }

    @Test func historyTransactionsNoticeWritesFromAnotherConnection() async throws {
        let directory = TemporaryDirectory()
        let watcher = try container(Todo.self, url: directory.file())
        let writer = try container(Todo.self, url: directory.file())
        let context = ModelContext(writer)
        context.insert(Todo(code: "T-0", title: "before", people: people("A", 0)))
        try context.save()

        // From the token before the writes: a task that starts late (a loaded machine) still
        // sees all three.
        let before = try watcher.currentHistoryToken()
        let received = Task {
            var tokens: [String] = []
            for await transaction in watcher.historyTransactions(after: before) {
                tokens.append(transaction.changes.compactMap { if case .text(let code)? = $0.values["code"] { code } else { nil } }.joined())
                if tokens.count == 3 { break }
            }
            return tokens
        }
        try await Task.sleep(for: .milliseconds(300))
        for i in 1...3 {
            context.insert(Todo(code: "T-\(i)", title: "after", people: people("A", i)))
            try context.save()
        }
        #expect(await received.value == ["T-1", "T-2", "T-3"])
    }

    /// A store file of an earlier or a later format is refused with what to do, and left
    /// as it was.
    @Test(arguments: ["2", "4"]) func aStoreOfAnotherFormatIsRefusedAndLeftAsItWas(_ version: String) throws {
        let directory = TemporaryDirectory()
        do {
            let container = try container(Item.self, url: directory.file())
            let context = ModelContext(container)
            context.insert(Item(name: "old"))
            try context.save()
            try container.writer.write { db in
                try db.execute(sql: "UPDATE tandem_metadata SET value = ? WHERE key = 'formatVersion'", arguments: [version])
            }
        }
        let error = #expect(throws: StoreError.self) { try container(Item.self, url: directory.file()) }
        #expect(error?.code == .corruptFile)
        #expect(error?.message.contains("format \(version)") == true && error?.message.contains("make a new store") == true, "\(error?.message ?? "")")
        let queue = try DatabaseQueue(path: directory.file().path(percentEncoded: false))
        #expect(try queue.read { db in try String.fetchOne(db, sql: "SELECT value FROM tandem_metadata WHERE key = 'formatVersion'") } == version)
        #expect(try queue.read { db in try String.fetchAll(db, sql: #"SELECT name FROM "Item""#) } == ["old"])
    }

    @Test func aMigrationKeepsJournalingTheNewColumns() throws {
        let directory = TemporaryDirectory()
        do {
            let container = try container(V1.Note.self, url: directory.file())
            let context = ModelContext(container)
            context.insert(V1.Note(title: "n"))
            try context.save()
        }
        let container = try container(V2.Note.self, url: directory.file())
        let context = ModelContext(container)
        let note = try #require(try context.fetch(FetchDescriptor<V2.Note>()).only)
        let before = try context.fetchHistory(HistoryDescriptor()).count
        note.body = "added"
        try context.save()
        let history = try context.fetchHistory(HistoryDescriptor())
        #expect(history.count == before + 1)
        #expect(history.last?.changes.only?.values["body"] == .text("added"))
    }
}

extension Collection {
    /// The single element, or `nil` when there are zero or several.
    var only: Element? { count == 1 ? first : nil }
}

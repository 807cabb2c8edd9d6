import Foundation
import Testing
@testable import Tandem

@Suite("Relationships")
struct RelationshipTests {
    func container() throws -> ModelContainer {
        try ModelContainer(for: relationshipModels, configurations: [ModelConfiguration(isStoredInMemoryOnly: true)])
    }

    @Test func settingAToOneUpdatesTheInverseInMemoryBeforeSave() throws {
        let context = ModelContext(try container())
        let tech = Category(name: "tech"), news = Category(name: "news")
        context.insert(tech)
        let article = Article(title: "Swift 6")
        context.insert(article)
        article.category = tech
        #expect(tech.articles.map(\.title) == ["Swift 6"])
        article.category = news
        #expect(tech.articles.isEmpty)
        #expect(news.articles.map(\.title) == ["Swift 6"])
        #expect(news.modelContext === context, "relating to an object that is not inserted inserts it")
    }

    @Test func settingAToManyUpdatesEachMembersInverse() throws {
        let context = ModelContext(try container())
        let tech = Category(name: "tech")
        context.insert(tech)
        let a = Article(title: "a"), b = Article(title: "b")
        tech.articles = [a, b]
        #expect(a.category === tech && b.category === tech)
        #expect(a.modelContext === context)
        tech.articles.removeAll { $0 === a }
        #expect(a.category == nil)
        #expect(b.category === tech)
    }

    @Test func relationshipsLoadAfterTheFetchingContextIsReleased() throws {
        let container = try container()
        let setup = ModelContext(container)
        let tech = Category(name: "tech")
        setup.insert(tech)
        tech.articles = [Article(title: "a"), Article(title: "b")]
        try setup.save()
        // The context is a temporary: only the fetched objects keep it.
        let category = try #require(try ModelContext(container).fetch(FetchDescriptor<Category>()).first)
        #expect(category.articles.map(\.title).sorted() == ["a", "b"])
        let article = try #require(try ModelContext(container).fetch(FetchDescriptor<Article>(predicate: #Predicate { $0.title == "a" })).first)
        #expect(article.category?.name == "tech")
    }

    @Test func toOneIsAForeignKeyHoldingTheUUIDAndLoadsLazily() throws {
        let container = try container()
        let context = ModelContext(container)
        let tech = Category(name: "tech")
        let article = Article(title: "a")
        context.insert(article)
        article.category = tech
        try context.save()
        let stored = try container.read { db in try String.fetchOne(db, sql: #"SELECT "category" FROM "Article""#) }
        #expect(stored == UUIDText.string(tech.persistentModelID.uuid))
        let fresh = ModelContext(container)
        let loaded = try #require(try fresh.fetch(FetchDescriptor<Article>()).first)
        #expect(loaded.category?.name == "tech")
        #expect(loaded.category?.articles.map(\.title) == ["a"])
        #expect(loaded.category === loaded.category?.articles.first?.category, "related objects come from the identity map")
    }

    @Test func manyToManyUsesAJoinTableAndBothSidesSeeIt() throws {
        let container = try container()
        let context = ModelContext(container)
        let swift = Tag(label: "swift"), linux = Tag(label: "linux")
        let article = Article(title: "a")
        context.insert(article)
        article.tags = [swift, linux]
        #expect(swift.articles.map(\.title) == ["a"])
        try context.save()
        let rows = try container.read { db in try Int.fetchOne(db, sql: #"SELECT COUNT(*) FROM "Article.tags""#) }
        #expect(rows == 2)
        let fresh = ModelContext(container)
        let tags = try fresh.fetch(FetchDescriptor<Tag>(sortBy: [SortDescriptor(\.label)]))
        #expect(tags.map { $0.articles.map(\.title) } == [["a"], ["a"]])
        let reloaded = try #require(try fresh.fetch(FetchDescriptor<Article>()).first)
        #expect(Set(reloaded.tags.map(\.label)) == ["swift", "linux"])
        reloaded.tags.removeAll { $0.label == "linux" }
        try fresh.save()
        #expect(try container.read { db in try Int.fetchOne(db, sql: #"SELECT COUNT(*) FROM "Article.tags""#) } == 1)
    }

    @Test func cascadeDeletesTheWholeSubtreeInTheSameSave() throws {
        let container = try container()
        let context = ModelContext(container)
        let collection = ArticleCollection(name: "c")
        context.insert(collection)
        collection.articles = [Article(title: "a"), Article(title: "b")]
        let other = Article(title: "kept")
        context.insert(other)
        try context.save()
        context.delete(collection)
        try context.save()
        #expect(try ModelContext(container).fetch(FetchDescriptor<Article>()).map(\.title) == ["kept"])
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<ArticleCollection>()) == 0)
    }

    @Test func nullifyClearsReferencesInTheStoreAndInMemory() throws {
        let container = try container()
        let context = ModelContext(container)
        let tech = Category(name: "tech")
        let article = Article(title: "a")
        context.insert(article)
        article.category = tech
        try context.save()
        context.delete(tech)
        try context.save()
        #expect(article.category == nil)
        let stored = try container.read { db in try String?.fetchOne(db, sql: #"SELECT "category" FROM "Article""#) }
        #expect(stored == .some(nil))
        #expect(try ModelContext(container).fetch(FetchDescriptor<Article>()).first?.category == nil)
    }

    @Test func denyRefusesTheDeleteNamingTheRelationshipAndWritesNothing() throws {
        let container = try ModelContainer(for: Shelf.self, Book.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        let shelf = Shelf(name: "s")
        context.insert(shelf)
        shelf.books = [Book(title: "b")]
        try context.save()
        context.delete(shelf)
        #expect {
            try context.save()
        } throws: { error in
            let error = error as? StoreError
            return error?.code == .constraintViolation && error?.entity == "Shelf" && error?.attribute == "books"
        }
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Shelf>()) == 1)
        context.rollback()
        let book = try #require(shelf.books.first)
        book.shelf = nil
        context.delete(shelf)
        try context.save()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Shelf>()) == 0)
    }

    @Test func cascadeCyclesTerminate() throws {
        let container = try ModelContainer(for: RingNode.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        let a = RingNode(name: "a"), b = RingNode(name: "b"), c = RingNode(name: "c")
        context.insert(a)
        a.next = b; b.next = c; c.next = a
        try context.save()
        context.delete(b)
        try context.save()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<RingNode>()) == 0)
    }

    @Test func relatingObjectsFromTwoContextsIsAnErrorThatSaysSo() throws {
        let container = try container()
        let one = ModelContext(container), two = ModelContext(container)
        let tech = Category(name: "tech")
        one.insert(tech)
        let article = Article(title: "a")
        two.insert(article)
        article.category = tech
        #expect {
            try two.save()
        } throws: { error in
            (error as? StoreError)?.code == .misuse && (error as? StoreError)?.message.contains("different ModelContexts") == true
        }
    }

    @Test func aDanglingReferenceToADeletedObjectIsClearedOnSave() throws {
        let container = try container()
        let context = ModelContext(container)
        let tech = Category(name: "tech")
        context.insert(tech)
        try context.save()
        context.delete(tech)
        let article = Article(title: "late")
        context.insert(article)
        article.category = tech
        try context.save()
        let stored = try container.read { db in try String?.fetchOne(db, sql: #"SELECT "category" FROM "Article""#) }
        #expect(stored == .some(nil))
    }

    @Test func schemaDescribesRelationships() throws {
        let schema = try Schema(relationshipModels)
        let article = try #require(schema.entity(named: "Article"))
        let category = try #require(article.relationship(named: "category"))
        #expect(category == Schema.Relationship(name: "category", destination: "Category", cardinality: .toOne, inverse: "articles"))
        let collection = try #require(schema.entity(named: "ArticleCollection")?.relationship(named: "articles"))
        #expect(collection.deleteRule == .cascade && collection.cardinality == .toMany && collection.inverse == "collection")
        #expect(article.relationship(named: "tags")?.inverse == "articles")
        let json = String(decoding: try schema.canonicalJSON(), as: UTF8.self)
        #expect(json.contains(#""deleteRule" : "cascade""#))
        #expect(try Schema(canonicalJSON: Data(json.utf8)) == schema)
        #expect(schema.storage(of: category, in: article) == .foreignKey(column: "category"))
        #expect(schema.storage(of: try #require(article.relationship(named: "tags")), in: article) == .joinTable(name: "Article.tags", ownerColumn: "source", memberColumn: "target"))
        let tagSide = try #require(schema.entity(named: "Tag"))
        #expect(
            schema.storage(of: try #require(tagSide.relationship(named: "articles")), in: tagSide)
                == .joinTable(name: "Article.tags", ownerColumn: "target", memberColumn: "source"))
    }

    @Test func anUnambiguousInverseIsInferred() throws {
        let schema = try Schema([PetOwner.self, Pet.self])
        #expect(schema.entity(named: "PetOwner")?.relationship(named: "pets")?.inverse == "owner")
        #expect(schema.entity(named: "Pet")?.relationship(named: "owner")?.inverse == "pets")
        let container = try ModelContainer(for: PetOwner.self, Pet.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        let ann = PetOwner(name: "Ann")
        context.insert(ann)
        let rex = Pet(name: "Rex")
        rex.owner = ann
        #expect(ann.pets.map(\.name) == ["Rex"])
        try context.save()
        let fresh = ModelContext(container)
        #expect(try fresh.fetch(FetchDescriptor<PetOwner>()).first?.pets.map(\.name) == ["Rex"])
    }

    @Test func aRelationshipToAModelOutsideTheContainerIsAClearError() throws {
        #expect {
            _ = try ModelContainer(for: Article.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        } throws: { error in
            (error as? StoreError)?.code == .invalidModel && (error as? StoreError)?.message.contains("not one of the container's models") == true
        }
    }
}

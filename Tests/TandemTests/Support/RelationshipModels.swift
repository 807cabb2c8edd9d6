import Tandem

// The seed articles' model: ArticleCollection <-->> Article <<--> Category, plus a
// many-to-many (Article <<-->> Tag) and the delete rules.

@Model final class Category {
    var name: String
    @Relationship(deleteRule: .nullify, inverse: \Article.category) var articles: [Article] = []
    init(name: String) { self.name = name }
}

@Model final class Article {
    var title: String
    var category: Category?
    var collection: ArticleCollection?
    var tags: [Tag] = []
    init(title: String) { self.title = title }
}

@Model final class ArticleCollection {
    var name: String
    @Relationship(deleteRule: .cascade, inverse: \Article.collection) var articles: [Article] = []
    init(name: String) { self.name = name }
}

@Model final class Tag {
    var label: String
    @Relationship(inverse: \Article.tags) var articles: [Article] = []
    init(label: String) { self.label = label }
}

/// `.deny`: a shelf with books cannot be deleted.
@Model final class Shelf {
    var name: String
    @Relationship(deleteRule: .deny, inverse: \Book.shelf) var books: [Book] = []
    init(name: String) { self.name = name }
}

@Model final class Book {
    var title: String
    var shelf: Shelf?
    init(title: String) { self.title = title }
}

/// A cascade that can form a cycle: deleting any node of a ring deletes the ring, once.
@Model final class RingNode {
    var name: String
    @Relationship(deleteRule: .cascade) var next: RingNode?
    init(name: String) { self.name = name }
}

let relationshipModels: [any PersistentModel.Type] = [Category.self, Article.self, ArticleCollection.self, Tag.self]

/// No `@Relationship` on either side: the inverse is inferred (one relationship each way).
@Model final class PetOwner {
    var name: String
    var pets: [Pet] = []
    init(name: String) { self.name = name }
}

@Model final class Pet {
    var name: String
    var owner: PetOwner?
    init(name: String) { self.name = name }
}

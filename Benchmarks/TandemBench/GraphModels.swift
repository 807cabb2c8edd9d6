import Tandem

// The relationship benchmark's graph, after the seed articles: collections of articles, each
// article in one category.

@Model final class GraphCategory {
    var name: String
    @Relationship(inverse: \GraphArticle.category) var articles: [GraphArticle] = []
    init(name: String) { self.name = name }
}

@Model final class GraphArticle {
    var title: String
    var category: GraphCategory?
    var collection: GraphCollection?
    init(title: String) { self.title = title }
}

@Model final class GraphCollection {
    var name: String
    @Relationship(deleteRule: .cascade, inverse: \GraphArticle.collection) var articles: [GraphArticle] = []
    init(name: String) { self.name = name }
}

let graphModels: [any PersistentModel.Type] = [GraphCategory.self, GraphArticle.self, GraphCollection.self]

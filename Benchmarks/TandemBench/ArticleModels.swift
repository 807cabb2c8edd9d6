import Tandem

/// A seed-style model for the fetch of "real models": a Codable composite holding an
/// optional and a `Date`, a `String` enum, an optional `Int` enum, an optional, a `Date`.
/// Eleven columns besides `"#id"`: title, "author.name", "author.email", "author.since",
/// status, section, rating, published, views, pinned, body.
@Model final class BenchArticle {
    var title: String
    var author: Byline
    var status: ArticleStatus
    var section: ArticleSection?
    var rating: Double?
    var published: Date
    var views: Int
    var pinned: Bool
    var body: String

    init(_ seed: ArticleSeed) {
        title = seed.title
        author = Byline(name: seed.authorName, email: seed.authorEmail, since: seed.authorSince)
        status = seed.status
        section = seed.section
        rating = seed.rating
        published = seed.published
        views = seed.views
        pinned = seed.pinned
        body = seed.body
    }
}

struct Byline: Codable, Hashable {
    var name: String
    var email: String?
    var since: Date
}

enum ArticleStatus: String, Codable, CaseIterable {
    case draft, review, published, archived
}

enum ArticleSection: Int, Codable, CaseIterable {
    case news, sport, culture, science
}

/// One row's values, the same for both competitors.
struct ArticleSeed {
    var title: String
    var authorName: String
    var authorEmail: String?
    var authorSince: Date
    var status: ArticleStatus
    var section: ArticleSection?
    var rating: Double?
    var published: Date
    var views: Int
    var pinned: Bool
    var body: String

    /// Deterministic rows: the email is nil for one row in three, the section for one in five.
    static func make(rows: Int) -> [ArticleSeed] {
        let names = ["Ann", "Bob", "Chloé", "Dmitri", "Eve", "Fatima", "Gustav", "Hiro"]
        return (0..<rows).map { i in
            let name = names[i % names.count]
            let email: String? = i % 3 == 0 ? nil : name.lowercased() + "@example.com"
            let since = Date(timeIntervalSince1970: 1_600_000_000 + Double(i % 1000) * 86_400)
            let section: ArticleSection? = i % 5 == 0 ? nil : ArticleSection.allCases[i % 4]
            let rating: Double? = i % 4 == 0 ? nil : Double(i % 50) / 10
            let published = Date(timeIntervalSince1970: 1_700_000_000 + Double(i))
            return ArticleSeed(
                title: "Article number \(i)", authorName: name, authorEmail: email, authorSince: since,
                status: ArticleStatus.allCases[i % 4], section: section, rating: rating, published: published,
                views: i * 3, pinned: i % 7 == 0, body: "The body of article \(i), a line of text")
        }
    }

    /// A digest of the values, to check both competitors read back what was stored.
    var digest: Int {
        var sum: Int = title.utf8.count
        sum = sum &+ authorName.utf8.count &* 3
        sum = sum &+ (authorEmail?.utf8.count ?? 5) &* 7
        sum = sum &+ Int(authorSince.timeIntervalSince1970) % 997
        sum = sum &+ status.rawValue.utf8.count &* 11
        sum = sum &+ (section?.rawValue ?? 9) &* 13
        sum = sum &+ Int((rating ?? 7.5) * 10)
        sum = sum &+ Int(published.timeIntervalSince1970) % 1009
        sum = sum &+ views &+ (pinned ? 17 : 0)
        return sum &+ body.utf8.count &* 19
    }
}

extension BenchArticle {
    /// The values it holds, as a seed (to compare with what was stored).
    var seed: ArticleSeed {
        ArticleSeed(
            title: title, authorName: author.name, authorEmail: author.email, authorSince: author.since, status: status, section: section,
            rating: rating, published: published, views: views, pinned: pinned, body: body)
    }
}

extension GRDBArticle {
    /// The values it holds, as a seed (to compare with what was stored).
    var seed: ArticleSeed {
        ArticleSeed(
            title: title, authorName: authorName, authorEmail: authorEmail, authorSince: authorSince, status: status, section: section,
            rating: rating, published: published, views: views, pinned: pinned, body: body)
    }
}

/// GRDB's twin: the same columns, read by position in a hand-written `init(row:)`.
struct GRDBArticle: FetchableRecord {
    var id: UUID
    var title: String
    var authorName: String
    var authorEmail: String?
    var authorSince: Date
    var status: ArticleStatus
    var section: ArticleSection?
    var rating: Double?
    var published: Date
    var views: Int
    var pinned: Bool
    var body: String

    init(row: Row) throws {
        id = row[0]
        title = row[1]
        authorName = row[2]
        authorEmail = row[3]
        authorSince = Date(timeIntervalSince1970: row[4])
        guard let status = ArticleStatus(rawValue: row[5]) else { throw BenchError("bad status in a GRDB row") }
        self.status = status
        if let raw = row[6] as Int? {
            guard let section = ArticleSection(rawValue: raw) else { throw BenchError("bad section in a GRDB row") }
            self.section = section
        } else {
            section = nil
        }
        rating = row[7]
        published = Date(timeIntervalSince1970: row[8])
        views = row[9]
        pinned = row[10]
        body = row[11]
    }
}

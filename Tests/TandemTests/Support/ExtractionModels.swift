import Foundation
import Tandem

// Declarations that are easy to read wrong from source; SchemaExtractionTests checks that
// `tandem schema extract` and the runtime agree on every one.

typealias Money = Decimal

/// Keys renamed and reordered by CodingKeys: decoded in the order of the keys.
struct Dimensions: Codable, Equatable {
    var width: Double
    var height: Double
    var unit: String?
    enum CodingKeys: String, CodingKey {
        case unit = "u"
        case height
        case width = "w"
    }
}

/// A top-level Price and a nested one: each use finds the nearest.
struct Price: Codable, Equatable {
    var cents: Int
}

enum Shop {
    struct Price: Codable, Equatable {
        var amount: Money
        var currency: String
    }
}

struct Link: Codable, Equatable {
    var url: URL
    var title: String?
}

struct Shipping: OptionSet, Codable {
    let rawValue: Int
    static let express = Shipping(rawValue: 1)
    static let gift = Shipping(rawValue: 2)
}

enum Keyword: String, Codable, CaseIterable {
    case `default`, `class`, plain
}

enum Ratio: Double, Codable, CaseIterable {
    case half = 0.5, one = 1, two
}

enum Big: UInt64, Codable, CaseIterable {
    case small = 1, huge = 18_000_000_000_000_000_000
}

/// The style of the seed articles: raw values, not CaseIterable. The sources list its cases;
/// the runtime cannot.
enum Grade: Int, Codable {
    case one, two, three = 7
}

enum Level: Int, Codable, CaseIterable, CustomStringConvertible {
    case low = 1, high = 9
    var description: String { self == .low ? "Low" : "High" }
}

@Model final class Product {
    var name: String
    var price: Price
    var shopPrice: Shop.Price
    var dimensions: Dimensions
    var cost: Money = 0
    var links: [Link] = []
    var shipping: Shipping = []
    var keyword: Keyword = .plain
    var ratio: Ratio = .one
    var big: Big = .small
    var level: Level = .low
    var grade: Grade = .one
    init(name: String) {
        self.name = name
        self.price = Price(cents: 0)
        self.shopPrice = Shop.Price(amount: 0, currency: "EUR")
        self.dimensions = Dimensions(width: 0, height: 0)
    }
}

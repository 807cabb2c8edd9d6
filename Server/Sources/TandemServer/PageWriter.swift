public import TandemWire

/// Writes a pull page: the JSON array of its entries, to `limit` entries or until they reach
/// `maxBytes` (the first entry goes in whatever its size), and whether more remain. Every
/// storage's `pullJSON` cuts its pages with it, so they end by the same rule.
///
/// ```swift
/// var page = PageWriter(limit: 100, maxBytes: 4 << 20)
/// for entry in entries where page.hasRoom {
///     page.add(position: entry.position) { $0.append(entry) }
/// }
/// return page.finish(hasMore: page.count < entries.count)
/// ```
public struct PageWriter {
    public let limit: Int
    public let maxBytes: Int
    public private(set) var count = 0
    private var json = WireJSON()
    private var first: Int64?
    private var last: Int64?

    public init(limit: Int, maxBytes: Int) {
        self.limit = limit
        self.maxBytes = maxBytes
        json.raw("[")
    }

    /// Whether the page takes another entry.
    public var hasRoom: Bool { count < limit && (count == 0 || json.bytes.count < maxBytes) }

    /// Adds the entry at `position`, written by `write`.
    public mutating func add(position: Int64, _ write: (inout WireJSON) throws -> Void) rethrows {
        if count > 0 { json.raw(",") }
        try write(&json)
        count += 1
        if first == nil { first = position }
        last = position
    }

    /// The page; `hasMore` when entries after it were left out.
    public consuming func finish(hasMore: Bool) -> PulledPage {
        json.raw("]")
        return PulledPage(json: json.bytes, count: count, firstPosition: first, lastPosition: last, hasMore: hasMore)
    }
}

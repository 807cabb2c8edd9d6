import Foundation
import TandemWire

/// A snapshot page as a bootstrap applies it: the page read for a bulk apply (plain inserts
/// as rows), and each row's `"#hlc"` text, both made on the thread that fetched the page
/// while the one before is applied.
///
/// ```swift
/// let page = SnapshotPage(try WireJSONReader.bulkPage(body, dataset: "todos", shapes: shapes), dataset: "todos", shapes: shapes)
/// page.record(at: 0)   // "tandem://todos/Todo/…"
/// ```
struct SnapshotPage: Sendable {
    /// A page, and the request for the one after it when it was made already.
    struct Fetched: Sendable {
        let page: SnapshotPage
        let following: (token: String, body: Task<Data, any Error>)?
    }

    let page: BulkPage
    let dataset: String
    let shapes: [BulkPage.Shape]
    /// Per item: the row's `"#hlc"` text (``ChangeApplier/rowStamps(_:_:)``), "" for an entry.
    let rowStamps: [String]

    init(_ page: BulkPage, dataset: String, shapes: [BulkPage.Shape]) {
        self.page = page
        self.dataset = dataset
        self.shapes = shapes
        rowStamps = page.items.map { item in
            guard case .row(let row) = item else { return "" }
            return ChangeApplier.rowStamps(row, shapes[row.shape])
        }
    }

    var hasMore: Bool { page.hasMore }
    var nextCursor: String { page.nextCursor }
    var isEmpty: Bool { page.items.isEmpty }

    /// The log position of the page's last item (the snapshot's: every item is the state of
    /// its record as of that position); `nil` for an empty page.
    var lastPosition: Int64? {
        switch page.items.last {
        case .row(let row)?: row.position
        case .entry(let entry)?: entry.position
        case nil: nil
        }
    }

    /// The URI of the record of item `index`.
    func record(at index: Int) -> String {
        switch page.items[index] {
        case .row(let row): "tandem://\(dataset)/\(shapes[row.shape].entity)/\(row.id)"
        case .entry(let entry): entry.change.record
        }
    }

    /// Item `index` as the log entry it was read from.
    func entry(at index: Int) -> LogEntry {
        switch page.items[index] {
        case .row(let row): row.entry(dataset: dataset, shape: shapes[row.shape])
        case .entry(let entry): entry
        }
    }
}

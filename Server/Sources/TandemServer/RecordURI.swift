import Foundation

/// `tandem://<dataset>/<Entity>/<uuid>`.
struct RecordURI {
    var dataset: String
    var entity: String
    var id: UUID

    /// The canonical form: the UUID in lowercase.
    var text: String { "tandem://\(dataset)/\(entity)/\(id.uuidString.lowercased())" }

    init?(_ text: String) {
        guard text.hasPrefix("tandem://") else { return nil }
        let parts = text.dropFirst("tandem://".count).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty, let id = UUID(uuidString: String(parts[2])) else { return nil }
        dataset = String(parts[0])
        entity = String(parts[1])
        self.id = id
    }
}

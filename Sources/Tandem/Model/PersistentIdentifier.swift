/// The stable identity of a record: dataset, entity and UUID.
///
/// Its URI, `tandem://<dataset>/<Entity>/<uuid>`, is the same across restarts, migrations
/// and replicas, and parses back.
///
/// ```swift
/// let uri = todo.persistentModelID.uriRepresentation   // tandem://default/Todo/1f0c…
/// let id = try PersistentIdentifier(uriRepresentation: uri)
/// let same = context.model(for: id) as? Todo
/// ```
public struct PersistentIdentifier: Hashable, Codable, Sendable, CustomStringConvertible {
    /// The dataset shown in the URI of an object not yet inserted in a context.
    public static let unassignedDataset = "_"

    public let dataset: String
    public let entityName: String
    public let uuid: UUID

    public init(dataset: String, entityName: String, uuid: UUID) {
        self.dataset = dataset
        self.entityName = entityName
        self.uuid = uuid
    }

    /// `tandem://<dataset>/<Entity>/<uuid>`, the UUID in lowercase.
    public var uriRepresentation: URL {
        URL(string: uriString)!
    }

    var uriString: String {
        "tandem://\(dataset)/\(entityName)/\(UUIDText.string(uuid))"
    }

    /// Parses a URI produced by ``uriRepresentation``.
    ///
    /// - Throws: ``StoreError`` with code ``StoreError/Code/invalidIdentifier`` naming what is
    ///   wrong (scheme, missing parts, a malformed UUID, an invalid entity name).
    public init(uriRepresentation uri: URL) throws {
        let text = uri.absoluteString
        func fail(_ why: String) -> StoreError {
            StoreError(.invalidIdentifier, "'\(text)' is not a Tandem record URI: \(why); expected tandem://<dataset>/<Entity>/<uuid>")
        }
        let prefix = "tandem://"
        guard text.hasPrefix(prefix) else { throw fail("the scheme must be tandem") }
        let parts = text.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw fail("it has \(parts.count) path parts, not 3") }
        let dataset = String(parts[0]), entity = String(parts[1]), uuidText = String(parts[2])
        guard DatasetName.isValid(dataset) else { throw fail("the dataset '\(dataset)' is empty or has characters other than letters, digits, '-', '_' and '.'") }
        guard !entity.isEmpty, entity.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }), !entity.first!.isNumber else {
            throw fail("'\(entity)' is not an entity name")
        }
        guard let uuid = UUIDText.parse(uuidText) else { throw fail("'\(uuidText)' is not a UUID") }
        self.init(dataset: dataset, entityName: entity, uuid: uuid)
    }

    public var description: String { uriString }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(uriString)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let url = URL(string: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "'\(text)' is not a URI")
        }
        do {
            try self.init(uriRepresentation: url)
        } catch let error as StoreError {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.message)
        }
    }
}

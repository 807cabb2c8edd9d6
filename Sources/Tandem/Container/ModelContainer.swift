internal import TandemWAL

/// Owns a store: its file (or memory), its schema and the model types it serves.
///
/// A container is `Sendable`: share it between tasks and give each its own ``ModelContext``.
///
/// ```swift
/// let container = try ModelContainer(for: Todo.self, Item.self,
///                                    configurations: ModelConfiguration(url: storeURL))
/// let context = ModelContext(container)
/// try container.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM Todo") }
/// ```
///
/// Opening migrates the file when the models changed in a way that loses nothing (new
/// entities; new optional or defaulted attributes; renames declared with `originalName`), in
/// one transaction. Anything else throws ``StoreError/Code/schemaMismatch`` naming entity,
/// attribute and change, and leaves the file untouched.
public final class ModelContainer: Sendable {
    /// The models' schema as the store keeps it: every entity under its name on disk and on
    /// the wire (``Schema/stored``: a class renamed with `@Model(originalName:)` under its
    /// first name, which is also its table's name). The same as ``declaredSchema`` when no
    /// model was renamed.
    public let schema: Schema
    /// The models' schema as declared (class names, `originalName`s): what the file's
    /// metadata records, what `tandem schema extract` extracts from the sources, and what
    /// the sync handshake registers on the server.
    ///
    /// ```swift
    /// // @Model(originalName: "Task") final class Todo
    /// container.declaredSchema.entities.map(\.name)   // ["Todo"]
    /// container.schema.entities.map(\.name)           // ["Task"]
    /// ```
    public let declaredSchema: Schema
    public let configurations: [ModelConfiguration]
    /// The dataset of the store, used in record URIs.
    public let dataset: String
    let writer: any DatabaseWriter
    let journal: JournalContext
    /// Checkpoints the file's write-ahead log off the writing connection (`nil` in memory).
    let checkpointer: WALCheckpointer?
    let mappings: [ObjectIdentifier: EntityMapping]
    let mappingsByName: [String: EntityMapping]

    /// Opens (or creates) the store for these model types.
    ///
    /// - Throws: ``StoreError`` — ``StoreError/Code/invalidModel`` for a type Tandem cannot
    ///   store, ``StoreError/Code/schemaMismatch`` for a change that cannot be migrated,
    ///   ``StoreError/Code/corruptFile`` / ``StoreError/Code/foreignFile`` for a file that is
    ///   not a Tandem store.
    public convenience init(for forTypes: any PersistentModel.Type..., configurations: ModelConfiguration...) throws {
        try self.init(for: forTypes, configurations: configurations)
    }

    /// Opens (or creates) the store for these model types.
    public convenience init(for types: [any PersistentModel.Type], configurations: [ModelConfiguration] = []) throws {
        guard configurations.count <= 1 else {
            throw StoreError(.misuse, "a container stores all its models in one configuration; got \(configurations.count)")
        }
        let mappings = try Self.mappings(for: types)
        try self.init(schema: Self.declaredSchema(of: mappings), mappings: mappings, configuration: configurations.first ?? ModelConfiguration())
    }

    /// Opens the store with `schema` (as declared); `mappings` are the model types (none for
    /// a store opened from its schema alone).
    init(schema: Schema, mappings: [EntityMapping], configuration: ModelConfiguration) throws {
        if let problem = schema.structuralProblem { throw StoreError(.invalidModel, problem) }
        let opened = try StoreFile.open(configuration: configuration, schema: schema, mappings: mappings)
        self.schema = schema.stored
        self.declaredSchema = schema
        self.configurations = [configuration]
        self.dataset = opened.dataset
        self.writer = opened.writer
        self.journal = opened.journal
        self.checkpointer = opened.checkpointer
        self.mappings = Dictionary(uniqueKeysWithValues: mappings.map { (ObjectIdentifier($0.modelType), $0) })
        self.mappingsByName = Dictionary(uniqueKeysWithValues: mappings.map { ($0.name, $0) })
    }

    static func mappings(for types: [any PersistentModel.Type]) throws -> [EntityMapping] {
        var result: [EntityMapping] = []
        var seenTypes: Set<ObjectIdentifier> = []
        let unique = types.filter { seenTypes.insert(ObjectIdentifier($0)).inserted }
        let checked = try unique.map { try EntityMapping.checkedProperties($0) }
        for (type, properties) in zip(unique, checked) {
            let mapping = EntityMapping(type, properties: properties, relationships: try RelationshipResolver.relationships(of: type, among: unique))
            if let other = result.first(where: { $0.name == mapping.name || String(describing: $0.modelType) == String(describing: type) }) {
                throw StoreError(
                    .invalidModel,
                    "two model types are both named or stored as '\(other.name == mapping.name ? mapping.name : String(describing: type))' (\(String(reflecting: other.modelType)) and \(String(reflecting: type))); a container holds one version of each entity",
                    entity: mapping.name)
            }
            result.append(mapping)
        }
        return result
    }

    /// The schema the model types declare: each entity under its class name with its
    /// `originalName`, relationships pointing at class names (the mappings' entities are the
    /// ``Schema/stored`` form).
    static func declaredSchema(of mappings: [EntityMapping]) -> Schema {
        let classNames = Dictionary(mappings.map { ($0.name, String(describing: $0.modelType)) }, uniquingKeysWith: { first, _ in first })
        return Schema(
            entities: mappings.map { mapping in
                var entity = mapping.entity
                entity.name = classNames[mapping.name] ?? mapping.name
                entity.originalName = mapping.modelType.originalEntityName
                for r in entity.relationships.indices {
                    entity.relationships[r].destination = classNames[entity.relationships[r].destination] ?? entity.relationships[r].destination
                }
                return entity
            })
    }

    func mapping(for type: any PersistentModel.Type) throws -> EntityMapping {
        guard let mapping = mappings[ObjectIdentifier(type)] else {
            throw StoreError(.misuse, "\(String(reflecting: type)) is not one of this container's models; pass it to ModelContainer(for:)", entity: type.entityName)
        }
        return mapping
    }

    /// Runs `body` with a read-only GRDB `Database`: the escape hatch for anything the model
    /// API lacks. Reads see a consistent snapshot.
    ///
    /// ```swift
    /// let n = try container.read { db in try Int.fetchOne(db, sql: #"SELECT COUNT(*) FROM "Todo""#) }
    /// ```
    public func read<T>(_ body: (Database) throws -> T) throws -> T {
        try StoreErrorMapping.map { try writer.read(body) }
    }

    /// Runs `body` in a write transaction with a GRDB `Database`: the escape hatch for raw SQL.
    ///
    /// Every row it inserts, updates or deletes is journaled like a model save, as one history
    /// transaction with `author` (`nil` by default). Throwing from `body` rolls the
    /// transaction back, journal included.
    ///
    /// ```swift
    /// try container.write(author: "importer") { db in
    ///     try db.execute(sql: #"UPDATE "Todo" SET "done" = 1 WHERE "code" LIKE 'T-%'"#)
    /// }
    /// ```
    ///
    /// - Throws: ``StoreError`` (``StoreError/Code/busy`` when another writer holds the lock
    ///   longer than the busy timeout), or what `body` throws.
    public func write<T>(author: String? = nil, _ body: (Database) throws -> T) throws -> T {
        try StoreErrorMapping.map { try Journal.write(writer, journal: journal, origin: .init(author: author), body: body) }
    }

    /// Runs `body` in a write transaction journaled as one marker instead of value by value:
    /// one history transaction with `author` and `context` and no changes, saying that the
    /// data changed wholesale (a sync bootstrap writes each page of a dataset's snapshot so;
    /// docs/journal.md). A journal reader that meets a marker reads the records again.
    ///
    /// For the sync engine: the journal's promise, every local change value by value, holds
    /// only for writes that go through ``write(author:_:)`` and model saves.
    ///
    /// ```swift
    /// try container.writeUnjournaled(author: "sync", context: "snapshot") { db in
    ///     try db.execute(sql: #"INSERT INTO "Todo" ("#id", "#hlc", "title") VALUES (?, ?, ?)"#, arguments: [id, stamps, title])
    /// }
    /// ```
    ///
    /// - Throws: ``StoreError``, or what `body` throws (the transaction is rolled back).
    public func writeUnjournaled<T>(author: String, context: String, _ body: (Database) throws -> T) throws -> T {
        try StoreErrorMapping.map { try Journal.write(writer, journal: journal, origin: .init(author: author, context: context), marker: true, body: body) }
    }
}

extension Schema {
    /// Describes model types as they are declared, exactly as a ``ModelContainer`` for them
    /// records it (its ``ModelContainer/declaredSchema``).
    ///
    /// ```swift
    /// let schema = try Schema([Todo.self, Item.self])
    /// print(String(decoding: try schema.canonicalJSON(), as: UTF8.self))
    /// ```
    ///
    /// - Throws: ``StoreError/Code/invalidModel`` when a type cannot be stored.
    public init(_ types: [any PersistentModel.Type]) throws {
        self = ModelContainer.declaredSchema(of: try ModelContainer.mappings(for: types))
    }
}

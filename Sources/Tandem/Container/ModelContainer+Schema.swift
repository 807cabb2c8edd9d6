public import Foundation
public import TandemSchema

extension ModelContainer {
    /// Opens or creates a store from a schema alone, without model types: what tools that
    /// have no Swift models use (the `tandem` CLI, the sync daemon). Rows are read and
    /// written with SQL through ``read(_:)`` and ``write(author:_:)``, journaled as usual.
    ///
    /// ```swift
    /// let schema = try Schema(canonicalJSON: Data(contentsOf: schemaURL))
    /// let container = try ModelContainer(schema: schema, configuration: ModelConfiguration(url: storeURL, dataset: "todos"))
    /// ```
    ///
    /// - Throws: ``StoreError`` with ``StoreError/Code/schemaMismatch`` when the file holds a
    ///   schema that cannot migrate to `schema`, and the errors of opening a store.
    public convenience init(schema: Schema, configuration: ModelConfiguration = ModelConfiguration()) throws {
        try self.init(schema: schema, mappings: [], configuration: configuration)
    }

    /// Opens an existing store file with the schema it stores.
    ///
    /// ```swift
    /// let container = try ModelContainer(contentsOf: URL(filePath: "todos.store"))
    /// print(container.schema.entities.map(\.name))
    /// ```
    ///
    /// - Throws: ``StoreError`` with ``StoreError/Code/misuse`` when there is no store at
    ///   `url`, ``StoreError/Code/foreignFile`` or ``StoreError/Code/corruptFile`` when the
    ///   file is not a readable Tandem store.
    public convenience init(contentsOf url: URL, configuration: ModelConfiguration? = nil) throws {
        let path = url.path(percentEncoded: false)
        guard let stored = try StoreFile.inspect(path: path, busyTimeout: configuration?.busyTimeout ?? ModelConfiguration().busyTimeout) else {
            throw StoreError(.misuse, "there is no Tandem store at \(path); create one with `tandem init --store \(path) --schema schema.json`")
        }
        var configuration = configuration ?? ModelConfiguration(url: url)
        configuration.url = url
        try self.init(schema: stored.schema, mappings: [], configuration: configuration)
    }
}

import Foundation
import TandemSchema
import TandemWire

/// Parsed schema versions by dataset and version. Registered versions never change, so a
/// push parses its schema once per server process, not once per request.
actor SchemaCache {
    private var schemas: [Int64: [Int: Schema]] = [:]

    /// The schema `version` of `dataset`, loading the history on a miss; `nil` when the
    /// dataset has no such version.
    func schema(dataset: Int64, version: Int, load: @Sendable () async throws -> [SchemaVersionInfo]) async throws -> Schema? {
        if let schema = schemas[dataset]?[version] { return schema }
        var parsed: [Int: Schema] = [:]
        for info in try await load() {
            parsed[info.version] = try Schema(canonicalJSON: Data(info.schema.utf8))
        }
        schemas[dataset] = parsed
        return parsed[version]
    }
}

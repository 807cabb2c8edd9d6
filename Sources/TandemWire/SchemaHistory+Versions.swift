import Foundation
public import TandemSchema

extension SchemaHistory {
    /// The registered versions `schema` is, oldest first: equal to its canonical JSON
    /// (`canonical`; `published` nil), or equal but for what a running app cannot see (the
    /// cases of an enum that is not CaseIterable, published from the sources; `published`
    /// that version). The sync handshake and the server's registration both decide by it.
    ///
    /// ```swift
    /// let newest = history.versions(of: schema, canonical: json).last?.version
    /// ```
    public func versions(of schema: Schema, canonical: String) -> [(version: Int, published: Schema?)] {
        versions.compactMap { info in
            if info.schema == canonical { return (info.version, nil) }
            guard let published = try? Schema(canonicalJSON: Data(info.schema.utf8)), schema.isVersion(of: published) else { return nil }
            return (info.version, published)
        }
    }
}

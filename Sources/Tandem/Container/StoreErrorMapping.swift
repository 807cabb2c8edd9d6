internal import GRDBSQLite

/// Turns GRDB and SQLite errors into ``StoreError``s a user can act on.
enum StoreErrorMapping {
    static func map<T>(path: String? = nil, mapping: EntityMapping? = nil, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as StoreError {
            throw error
        } catch let error as DatabaseError {
            throw storeError(error, path: path, mapping: mapping)
        }
    }

    static func storeError(_ error: DatabaseError, path: String? = nil, mapping: EntityMapping? = nil) -> StoreError {
        let message = error.message ?? "\(error)"
        switch error.resultCode {
        case .SQLITE_NOTADB, .SQLITE_CORRUPT:
            return StoreError(.corruptFile, "\(path ?? "the store") is not a valid SQLite database or is damaged (\(message)); restore it from a backup or open another path", underlying: error)
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return StoreError(.busy, "the store is locked by another connection (\(message)); retry, or raise ModelConfiguration.busyTimeout", underlying: error)
        case .SQLITE_CONSTRAINT:
            if error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE || error.extendedResultCode == .SQLITE_CONSTRAINT_PRIMARYKEY {
                let (entity, attribute) = uniqueTarget(message, mapping: mapping)
                return StoreError(
                    .uniqueViolation, "another \(entity ?? "record") already has this \(attribute ?? "value") (\(message)); nothing was saved — change the value and save again",
                    entity: entity, attribute: attribute, underlying: error)
            }
            return StoreError(.constraintViolation, "a constraint failed: \(message)", entity: mapping?.name, underlying: error)
        case .SQLITE_CANTOPEN:
            return StoreError(.corruptFile, "cannot open \(path ?? "the store"): \(message); check that the directory exists and is writable", underlying: error)
        default:
            return StoreError(.sqlite, message, entity: mapping?.name, underlying: error)
        }
    }

    /// `UNIQUE constraint failed: Todo.code` → ("Todo", "code"); composite leaves
    /// (`Todo.people.name`) map back to their attribute.
    static func uniqueTarget(_ message: String, mapping: EntityMapping?) -> (String?, String?) {
        guard let range = message.range(of: "failed: ") else { return (mapping?.name, nil) }
        let first = message[range.upperBound...].split(separator: ",").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        guard let dot = first.firstIndex(of: ".") else { return (mapping?.name, nil) }
        let entity = String(first[..<dot])
        let column = String(first[first.index(after: dot)...])
        if column == "#id" { return (entity, "#id") }
        let attribute = column.split(separator: ".").first.map(String.init)
        return (entity, attribute)
    }
}

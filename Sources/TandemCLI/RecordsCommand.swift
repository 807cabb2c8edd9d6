import ArgumentParser
import Foundation
import GRDB
import Tandem
import TandemSchema
import TandemSQLite
import TandemSync
import TandemWire

/// `tandem records put|get|list|delete`: records as JSON, for scripts and operations. Writes
/// are journaled (author `tandem`), so they sync like an app's.
struct RecordsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "records",
        abstract: "Read and write a store's records as JSON (journaled, so they sync).",
        subcommands: [Put.self, Get.self, List.self, Delete.self])

    /// A record as printed: its URI, entity and column values, and the members of each of
    /// its many-to-many relationships (lowercase UUIDs, sorted).
    struct Printed: Codable {
        var record: String
        var entity: String
        var values: [String: WireValue]
        var links: [String: [String]]?
    }

    /// A value of `records put`'s JSON object: a column's value, or the members of a
    /// many-to-many relationship (an array of UUIDs or record URIs).
    enum PutValue: Decodable {
        case value(WireValue)
        case members([String])
        /// A JSON object that is not a value (`{"bytes": …}`): a composite given whole, say.
        case object

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let members = try? container.decode([String].self) {
                self = .members(members)
            } else if let value = try? container.decode(WireValue.self) {
                self = .value(value)
            } else if (try? decoder.container(keyedBy: AnyKey.self)) != nil {
                self = .object  // any JSON object has a keyed container, whatever its keys
            } else {
                self = .value(try container.decode(WireValue.self))
            }
        }

        private enum AnyKey: String, CodingKey { case any }
    }

    /// The message for a composite attribute given whole (an object), when `name` is one.
    static func compositeHint(_ name: String, of entity: Schema.Entity) -> CLIError? {
        guard let attribute = entity.attributes.first(where: { $0.name == name }), attribute.columns.count > 1 else { return nil }
        return CLIError("\(name): a composite attribute is set leaf by leaf, one column each: \(attribute.columns.map { "\"\($0.name)\"" }.joined(separator: ", "))")
    }

    /// The many-to-many relationships of `entity`: name → join table, this record's column,
    /// the member's, and the member's entity.
    static func joins(of entity: Schema.Entity, in schema: Schema) -> [String: (table: String, owner: String, member: String, destination: String)] {
        var joins: [String: (table: String, owner: String, member: String, destination: String)] = [:]
        for relationship in entity.relationships {
            guard case .joinTable(let table, let owner, let member) = schema.storage(of: relationship, in: entity) else { continue }
            joins[relationship.name] = (table, owner, member, relationship.destination)
        }
        return joins
    }

    /// The members of each many-to-many relationship of record `uuid`; `nil` when it has none.
    static func links(of uuid: String, entity: Schema.Entity, in schema: Schema, _ db: Database) throws -> [String: [String]]? {
        let joins = joins(of: entity, in: schema)
        guard !joins.isEmpty else { return nil }
        var links: [String: [String]] = [:]
        for (name, join) in joins {
            links[name] = try String.fetchAll(
                db, sql: "SELECT \(SQLName.quote(join.member)) FROM \(SQLName.quote(join.table)) WHERE \(SQLName.quote(join.owner)) = ? ORDER BY 1",
                arguments: [uuid])
        }
        return links
    }

    static func entity(_ name: String, in container: ModelContainer) throws -> Schema.Entity {
        // A renamed model is named by its class name or its first name (URIs keep the latter).
        guard let entity = container.schema.entity(named: container.declaredSchema.storedEntityName(name)) else {
            throw CLIError("no entity '\(name)' in the store; it has \(container.declaredSchema.entities.map(\.name).joined(separator: ", "))")
        }
        return entity
    }

    static func columns(of entity: Schema.Entity) -> [Schema.Column] {
        entity.columns.filter { $0.role != .primaryKey }
    }

    static func parse(_ uri: String, in container: ModelContainer) throws -> (Schema.Entity, String) {
        guard let url = URL(string: uri), let id = try? PersistentIdentifier(uriRepresentation: url) else {
            throw CLIError("'\(uri)' is not a record URI (tandem://dataset/Entity/uuid)")
        }
        guard id.dataset == container.dataset else { throw CLIError("'\(uri)' belongs to dataset '\(id.dataset)'; the store is '\(container.dataset)'") }
        return (try entity(id.entityName, in: container), id.uuid.uuidString.lowercased())
    }

    /// A row as printed; a column the schema names and the table lacks is an error that
    /// says so (GRDB's subscript would stop the process).
    /// `row` is a cursor's current row, so its text is read whole (``Row/wireValue(at:)``).
    static func printed(_ row: Row, entity: Schema.Entity, dataset: String, links: ((String) throws -> [String: [String]]?)? = nil) throws -> Printed {
        var values: [String: WireValue] = [:]
        let names = Array(row.columnNames)
        for column in columns(of: entity) {
            guard let index = names.firstIndex(of: column.name) else {
                throw CLIError(
                    "the store's table '\(entity.name)' has no column '\(column.name)', which its schema names: the store is damaged; migrate it again with tandem init --store FILE --schema SCHEMA.json"
                )
            }
            values[column.name] = row.wireValue(at: index)
        }
        let id: String = row["#id"]
        return Printed(record: "tandem://\(dataset)/\(entity.name)/\(id)", entity: entity.name, values: values, links: try links?(id))
    }

    struct Put: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Insert a record, or update the given columns of an existing one; prints its URI.",
            discussion: #"Example: tandem records put --store todos.store --entity Todo '{"title": "Buy milk", "rank": 2}'"#)
        @OptionGroup var store: StoreOptions
        @Option(help: "The entity.") var entity: String
        @Option(help: "The record's UUID (a new one when omitted).") var id: String?
        @Argument(help: "The values as a JSON object of column names ('-': read standard input).") var json: String

        func run() throws {
            let container = try store.open()
            let entity = try RecordsCommand.entity(entity, in: container)
            let text = json == "-" ? String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self) : json
            let given: [String: PutValue]
            do { given = try JSONDecoder().decode([String: PutValue].self, from: Data(text.utf8)) } catch {
                throw CLIError("the values are not a JSON object of column values (and of many-to-many relationships, each an array of UUIDs): \(error)")
            }
            let joins = RecordsCommand.joins(of: entity, in: container.schema)
            var values: [String: WireValue] = [:]
            var members: [String: [String]] = [:]
            for (name, value) in given {
                switch value {
                case .value(let value): values[name] = value
                case .object:
                    if let hint = RecordsCommand.compositeHint(name, of: entity) { throw hint }
                    throw CLIError("\(name): an object is not a column value (null, a boolean, a number, a string, or {\"bytes\": \"<base64>\"})")
                case .members(let list):
                    guard let join = joins[name] else {
                        throw CLIError(
                            "\(name): an array sets the members of a many-to-many relationship; '\(entity.name)' has \(joins.isEmpty ? "none" : joins.keys.sorted().joined(separator: ", "))")
                    }
                    members[name] = try list.map { try RecordsCommand.referencedID($0, column: name, destination: join.destination, dataset: container.dataset) }
                }
            }
            let known = Dictionary(uniqueKeysWithValues: RecordsCommand.columns(of: entity).map { ($0.name, $0) })
            if let unknown = values.keys.sorted().first(where: { known[$0] == nil }) {
                if joins[unknown] != nil {
                    throw CLIError("\(unknown): a many-to-many relationship takes an array of UUIDs (or record URIs), [] for none")
                }
                if let hint = RecordsCommand.compositeHint(unknown, of: entity) { throw hint }
                throw CLIError("'\(entity.name)' has no column '\(unknown)'; its columns are \(known.keys.sorted().joined(separator: ", "))")
            }
            // The server refuses a value that does not fit its column; refuse it here, before
            // it is journaled and would block every later push.
            for (name, value) in values.sorted(by: { $0.key < $1.key }) where !value.fits(known[name]!) {
                throw CLIError(
                    "\(name): \(String(decoding: WireJSON.data { $0.append(value) }, as: UTF8.self)) does not fit column '\(name)' (\(known[name]!.sqlType.rawValue)\(known[name]!.isNullable ? ", nullable" : ""))"
                )
            }
            // And a raw value none of an enum's cases (when the schema lists them).
            let cases = EnumCases.columns(of: entity)
            for (name, value) in values.sorted(by: { $0.key < $1.key }) {
                if let enumCases = cases[name], !enumCases.contains(value) {
                    throw CLIError("\(name): \(String(decoding: WireJSON.data { $0.append(value) }, as: UTF8.self)) is not a case of \(enumCases.enumeration.typeName) (\(enumCases.listed))")
                }
            }
            for (name, value) in values.sorted(by: { $0.key < $1.key }) {
                guard case .text(let text) = value else { continue }
                // A reference is its record's UUID, lowercase, as the store writes it (a delete
                // rule looks it up as such); a record URI of the destination is taken too.
                if known[name]!.role == .foreignKey, let relationship = entity.relationship(named: name) {
                    values[name] = .text(try RecordsCommand.referencedID(text, column: name, destination: relationship.destination, dataset: container.dataset))
                }
            }
            let uuid: String
            if let id {
                guard let parsed = UUID(uuidString: id) else { throw CLIError("'\(id)' is not a UUID") }
                uuid = parsed.uuidString.lowercased()
            } else {
                uuid = UUID().uuidString.lowercased()
            }
            let table = SQLName.quote(entity.name)
            do {
                try container.write(author: "tandem") { db in
                    let exists = try Bool.fetchOne(db, sql: "SELECT 1 FROM \(table) WHERE \"#id\" = ?", arguments: [uuid]) ?? false
                    // A reference names a record this store holds, as a link does: one to a record
                    // nobody has would point nowhere on every replica.
                    for (name, value) in values.sorted(by: { $0.key < $1.key }) {
                        guard known[name]!.role == .foreignKey, case .text(let target) = value,
                            let destination = entity.relationship(named: name)?.destination
                        else { continue }
                        guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(SQLName.quote(destination)) WHERE \"#id\" = ?)", arguments: [target]) == true else {
                            throw CLIError(
                                "\(name): no \(destination) \(target) in the store to point at; create it first (tandem records put --entity \(destination) --id \(target) …), sync to receive it, or give null"
                            )
                        }
                    }
                    var given = values.mapValues(\.databaseValue)
                    if !exists {
                        // A new record: attributes left out take their schema defaults; one
                        // that has none and cannot be null is named.
                        for attribute in entity.attributes {
                            for column in attribute.columns where given[column.name] == nil {
                                if let text = attribute.defaultValue, attribute.columns.count == 1, let literal = column.defaultLiteral(text) {
                                    given[column.name] = literal
                                } else if let text = attribute.defaultValue, case .enumeration(let enumeration) = attribute.type,
                                    let value = EnumCases.defaultValue(text, of: enumeration)
                                {
                                    given[column.name] = value.databaseValue  // a case by name: `.normal`
                                }
                            }
                        }
                        let missing = RecordsCommand.columns(of: entity).filter { !$0.isNullable && given[$0.name] == nil }.map(\.name)
                        if !missing.isEmpty {
                            throw CLIError(
                                id == nil
                                    ? "a new \(entity.name) needs \(missing.joined(separator: ", ")) (they have no default and cannot be null)"
                                    : "no \(entity.name) \(uuid) in the store to update; to create it, give \(missing.joined(separator: ", ")) too (they have no default and cannot be null)")
                        }
                    }
                    let names = given.keys.sorted()
                    let arguments = names.map { given[$0]! }
                    // The links: the relationship's members become exactly those given (a
                    // link or an unlink per member that changes, journaled as an app's).
                    func setLinks() throws {
                        for (name, list) in members.sorted(by: { $0.key < $1.key }) {
                            let join = joins[name]!
                            let (table, owner, member) = (SQLName.quote(join.table), SQLName.quote(join.owner), SQLName.quote(join.member))
                            let current = Set(try String.fetchAll(db, sql: "SELECT \(member) FROM \(table) WHERE \(owner) = ?", arguments: [uuid]))
                            for gone in current.subtracting(list).sorted() {
                                try db.execute(sql: "DELETE FROM \(table) WHERE \(owner) = ? AND \(member) = ?", arguments: [uuid, gone])
                            }
                            for added in Set(list).subtracting(current).sorted() {
                                // Only records this store holds: the server refuses a link to a
                                // record it does not know, and the row would stay here alone.
                                guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(SQLName.quote(join.destination)) WHERE \"#id\" = ?)", arguments: [added]) == true else {
                                    throw CLIError(
                                        "\(name): no \(join.destination) \(added) in the store to link; create it first (tandem records put --entity \(join.destination) --id \(added) …) or sync to receive it"
                                    )
                                }
                                try db.execute(sql: "INSERT INTO \(table) (\(owner), \(member)) VALUES (?, ?)", arguments: [uuid, added])
                            }
                        }
                    }
                    if exists {
                        try setLinks()
                        guard !names.isEmpty else { return }
                        // Bound straight to SQLite: text whole, a NUL inside included.
                        try db.makeStatement(sql: "UPDATE \(table) SET \(names.map { SQLName.quote($0) + " = ?" }.joined(separator: ", ")) WHERE \"#id\" = ?")
                            .executeBound { bind in
                                for value in arguments { bind.value(value) }
                                bind.text(uuid)
                            }
                    } else {
                        try db.makeStatement(
                            sql: "INSERT INTO \(table) (\"#id\"\(names.map { ", " + SQLName.quote($0) }.joined())) VALUES (?\(String(repeating: ", ?", count: names.count)))"
                        ).executeBound { bind in
                            bind.text(uuid)
                            for value in arguments { bind.value(value) }
                        }
                        try setLinks()
                    }
                }
            } catch let error as StoreError {
                throw CLIError("the record was not written: \(error.message)")
            }
            print("tandem://\(container.dataset)/\(entity.name)/\(uuid)")
        }
    }

    /// The lowercase UUID a reference value names: a UUID, or a record URI of `destination`.
    static func referencedID(_ text: String, column: String, destination: String, dataset: String) throws -> String {
        if let uuid = UUID(uuidString: text) { return uuid.uuidString.lowercased() }
        if let url = URL(string: text), let id = try? PersistentIdentifier(uriRepresentation: url) {
            guard id.entityName == destination, id.dataset == dataset else {
                throw CLIError("\(column): '\(text)' is a \(id.entityName) of dataset '\(id.dataset)'; \(column) refers to a \(destination) of '\(dataset)'")
            }
            return id.uuid.uuidString.lowercased()
        }
        throw CLIError("\(column): '\(text)' is not a \(destination)'s UUID (or its tandem:// URI)")
    }

    struct Get: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print one record as JSON.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The record URI.") var uri: String

        func run() throws {
            let container = try store.open()
            let (entity, uuid) = try RecordsCommand.parse(uri, in: container)
            let printed = try container.read { db -> Printed? in
                // The cursor stays alive while its row is read.
                let rows = try Row.fetchCursor(db, sql: "SELECT * FROM \(SQLName.quote(entity.name)) WHERE \"#id\" = ?", arguments: [uuid])
                guard let row = try rows.next() else { return nil }
                return try RecordsCommand.printed(row, entity: entity, dataset: container.dataset) { try RecordsCommand.links(of: $0, entity: entity, in: container.schema, db) }
            }
            guard let printed else { throw CLIError("no record \(uri)") }
            try printJSON(printed)
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the records of an entity as a JSON array (ordered by id).")
        @OptionGroup var store: StoreOptions
        @Option(help: "The entity.") var entity: String
        @Option(help: "At most this many.") var limit = 1000

        func run() throws {
            let container = try store.open()
            let entity = try RecordsCommand.entity(entity, in: container)
            let printed = try container.read { db in
                let rows = try Row.fetchCursor(db, sql: "SELECT * FROM \(SQLName.quote(entity.name)) ORDER BY \"#id\" LIMIT ?", arguments: [limit])
                var printed: [Printed] = []
                while let row = try rows.next() {
                    printed.append(
                        try RecordsCommand.printed(row, entity: entity, dataset: container.dataset) { try RecordsCommand.links(of: $0, entity: entity, in: container.schema, db) })
                }
                return printed
            }
            try printJSON(printed)
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a record, with the schema's delete rules (cascade, nullify, deny), as a model save would.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The record URI.") var uri: String

        func run() throws {
            let container = try store.open()
            let (entity, uuid) = try RecordsCommand.parse(uri, in: container)
            guard let id = UUID(uuidString: uuid) else { throw CLIError("'\(uuid)' is not a UUID") }
            let deleted: [String: [UUID]]
            do { deleted = try container.deleteRecord(entity: entity.name, id: id, author: "tandem") } catch let error as StoreError {
                throw CLIError("nothing was deleted: \(error.message)")
            }
            guard !deleted.isEmpty else { throw CLIError("no record \(uri)") }
            // In canonical form: a renamed model's URI keeps its first name.
            print("deleted tandem://\(container.dataset)/\(entity.name)/\(uuid)")
            let others = deleted.values.reduce(0) { $0 + $1.count } - 1
            if others > 0 {
                print("and \(others) record(s) its delete rules reach: " + deleted.sorted { $0.key < $1.key }.map { "\($0.value.count) \($0.key)" }.joined(separator: ", "))
            }
        }
    }
}

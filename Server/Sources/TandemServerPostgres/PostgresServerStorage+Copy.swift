import Foundation
import Logging
import PostgresNIO
public import TandemServer

extension PostgresServerStorage {
    /// What ``copy(from:)`` did.
    public struct CopyReport: Sendable {
        /// Rows copied per table (empty when ``alreadyCopied``).
        public var rows: [String: Int] = [:]
        /// The database already held this very copy: nothing was done.
        public var alreadyCopied = false
    }

    /// Copies a SQLite deployment into this database, which must hold no data: users, tokens,
    /// datasets, schema history, records, the log with its positions, lost values,
    /// idempotency answers and the cursor key and epoch, so every client's cursor stays
    /// valid. One transaction: a copy cut short leaves nothing. Run again after it
    /// succeeded, it finds its own copy and does nothing. The caller then marks the source
    /// (``SQLiteServerStorage/markCopied(to:)``).
    ///
    /// ```swift
    /// let report = try await postgres.copy(from: sqlite)
    /// try await sqlite.markCopied(to: postgres.location)
    /// ```
    ///
    /// - Throws: ``StorageError/conflict(_:)`` when the database holds other data;
    ///   ``StorageError/unavailable(_:)`` when PostgreSQL fails.
    public func copy(from source: SQLiteServerStorage) async throws -> CopyReport {
        let (marker, originEpoch) = try await source.copyOrigin()
        let sequences = try await source.idSequences()
        let logger = self.logger
        let cursorKey = source.cursorKey
        let report = try await pool.withTransaction(operationDeadline: .seconds(24 * 3600)) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.epochLock))", logger: logger)
            let copied = try await connection.query("SELECT key FROM server_keys WHERE name = 'copied_from'", logger: logger).collect()
                .first.map { String(buffer: try $0.decode(ByteBuffer.self)) }
            if copied == marker { return CopyReport(alreadyCopied: true) }
            let held =
                try await connection.query("SELECT (SELECT COUNT(*) FROM users) + (SELECT COUNT(*) FROM datasets)", logger: logger).collect()
                .first?.decode(Int64.self) ?? 0
            guard held == 0 else {
                throw StorageError.conflict(
                    copied == nil
                        ? "the PostgreSQL database already holds users or datasets; copy into an empty database (createdb), or drop this one's tables"
                        : "the PostgreSQL database holds a copy of other data (\(copied ?? "")), or of this data before it changed; copy into an empty database"
                )
            }
            // Each column's type, as this layout made it.
            var types: [String: String] = [:]
            for try await (table, column, type) in try await connection.query(
                "SELECT table_name::TEXT, column_name::TEXT, udt_name::TEXT FROM information_schema.columns WHERE table_schema = current_schema()",
                logger: logger
            ).decode((String, String, String).self) {
                types["\(table).\(column)"] = type
            }
            var report = CopyReport()
            for try await batch in source.export() {
                let columnTypes = try batch.columns.map { column in
                    guard let type = types["\(batch.table).\(column)"] else {
                        throw StorageError.unavailable("the PostgreSQL layout has no column \(batch.table).\(column); copy with the tandem-server that made the SQLite data")
                    }
                    return type
                }
                try await Self.insert(batch, types: columnTypes, connection, logger: logger)
                report.rows[batch.table, default: 0] += batch.rows.count
            }
            try await connection.query(
                "UPDATE datasets SET log_head = COALESCE((SELECT MAX(position) FROM log WHERE log.dataset_id = datasets.id), 0)", logger: logger)
            // A removed user's or a deleted dataset's id is never made again: ids start past
            // every id the source gave (its sequences, its deleted datasets).
            for (table, used) in [
                ("users", "SELECT MAX(id) FROM users UNION ALL SELECT \(sequences["users"] ?? 0)"),
                ("datasets", "SELECT MAX(id) FROM datasets UNION ALL SELECT MAX(id) FROM deleted_datasets UNION ALL SELECT \(sequences["datasets"] ?? 0)"),
                ("lost_values", "SELECT MAX(id) FROM lost_values"),
            ] {
                try await connection.query(
                    PostgresQuery(
                        unsafeSQL: "SELECT setval(pg_get_serial_sequence('\(table)', 'id'), COALESCE((SELECT MAX(id) FROM (\(used)) AS used(id)), 0) + 1, false)"),
                    logger: logger)
            }
            try await connection.query(
                """
                INSERT INTO server_keys(name, key) VALUES ('cursor', \(ByteBuffer(bytes: cursorKey))), ('copied_from', \(ByteBuffer(string: marker)))
                ON CONFLICT (name) DO UPDATE SET key = excluded.key
                """, logger: logger)
            // The log keeps its positions, so the cursors of the source's epoch stay valid here.
            let epoch = StorageEpoch(value: originEpoch, identity: try await Self.identity(connection, logger: logger))
            try await Self.store(epoch, connection, logger: logger)
            return report
        }
        if !report.alreadyCopied {
            settledEpoch.withLockedValue { $0.value = originEpoch }
        }
        return report
    }

    /// Inserts a batch with one multi-row statement.
    /// `types`: each column's PostgreSQL type (`int8`, `int4`, `text`, `bytea`).
    private static func insert(_ batch: ExportBatch, types: [String], _ connection: PostgresConnection, logger: Logger) async throws {
        guard !batch.rows.isEmpty else { return }
        // At most 65 535 parameters per statement.
        let perStatement = max(1, 60_000 / max(batch.columns.count, 1))
        var start = 0
        while start < batch.rows.count {
            let rows = batch.rows[start..<min(start + perStatement, batch.rows.count)]
            var bindings = PostgresBindings(capacity: rows.count * batch.columns.count)
            var values: [String] = []
            values.reserveCapacity(rows.count)
            var parameter = 0
            for row in rows {
                var placeholders: [String] = []
                placeholders.reserveCapacity(row.count)
                for (value, type) in zip(row, types) {
                    switch value {
                    case .null: bindings.appendNull()
                    case .integer(let integer):
                        switch type {
                        case "int4": bindings.append(Int32(truncatingIfNeeded: integer))
                        case "int8": bindings.append(integer)
                        case "bool": bindings.append(integer != 0)
                        default: bindings.append(String(integer))
                        }
                    case .bytes(let bytes):
                        if type == "bytea" { bindings.append(ByteBuffer(bytes: bytes)) } else { bindings.append(String(decoding: bytes, as: UTF8.self)) }
                    }
                    parameter += 1
                    placeholders.append("$\(parameter)::\(type)")
                }
                values.append("(" + placeholders.joined(separator: ", ") + ")")
            }
            let sql = "INSERT INTO \(batch.table)(\(batch.columns.joined(separator: ", "))) VALUES " + values.joined(separator: ", ")
            try await connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger)
            start += perStatement
        }
    }
}

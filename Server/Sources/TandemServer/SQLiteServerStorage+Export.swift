public import Foundation
import GRDB
import NIOConcurrencyHelpers

/// A batch of one table's rows, as ``SQLiteServerStorage/export(batchSize:)`` reads them:
/// integers as integers, everything else as its bytes (text whole, NULs included), `nil`
/// for NULL.
public struct ExportBatch: Sendable {
    public enum Value: Sendable, Equatable {
        case integer(Int64)
        case bytes([UInt8])
        case null
    }

    public var table: String
    public var columns: [String]
    public var rows: [[Value]]
}

extension SQLiteServerStorage {
    /// The tables that hold the server's data, in an order that satisfies their references.
    public static let exportedTables = [
        "users", "tokens", "datasets", "dataset_members", "deleted_datasets", "schema_versions", "records", "log", "lost_values", "idempotency", "unique_values",
        "merged_records", "link_members", "log_marks",
    ]

    /// The last id each `AUTOINCREMENT` table gave (`users`, `datasets`): a copy starts its
    /// own ids past them, so a removed user's or a deleted dataset's id is never made again.
    public func idSequences() async throws -> [String: Int64] {
        try await pool.read { db in
            Dictionary(
                try Row.fetchAll(db, sql: "SELECT name, seq FROM sqlite_sequence").map { (row: Row) in (row[0] as String, row[1] as Int64) },
                uniquingKeysWith: max)
        }
    }

    /// Reads every table of ``exportedTables`` in one read transaction (one state of the
    /// data), `batchSize` rows at a time, each read when the consumer asks for the one before
    /// it: a large database is never held in memory.
    ///
    /// ```swift
    /// for try await batch in storage.export() { try await copy(batch) }
    /// ```
    ///
    /// - Throws: (from the sequence) a `DatabaseError` when the file cannot be read.
    public func export(batchSize: Int = 1_000) -> ExportSequence {
        let (stream, continuation) = AsyncThrowingStream<ExportBatch, any Error>.makeStream()
        // Made with 0 and signalled once: libdispatch traps when a semaphore is freed with
        // a value below the one it was made with.
        let room = DispatchSemaphore(value: 0)
        room.signal()
        let stopped = NIOLockedValueBox(false)
        continuation.onTermination = { _ in
            stopped.withLockedValue { $0 = true }
            room.signal()
        }
        let reader = pool
        // A thread of its own: it blocks while the consumer is behind.
        Thread.detachNewThread {
            do {
                try reader.read { db in
                    for table in Self.exportedTables {
                        let columns = try db.columns(in: table).map(\.name)
                        let selection = columns.map { "CASE WHEN typeof(\($0)) = 'text' THEN CAST(\($0) AS BLOB) ELSE \($0) END" }.joined(separator: ", ")
                        let rows = try Row.fetchCursor(db, sql: "SELECT \(selection) FROM \(table)")
                        var batch: [[ExportBatch.Value]] = []
                        func send() -> Bool {
                            room.wait()
                            guard !stopped.withLockedValue({ $0 }) else { return false }
                            continuation.yield(ExportBatch(table: table, columns: columns, rows: batch))
                            batch.removeAll(keepingCapacity: true)
                            return true
                        }
                        while let row = try rows.next() {
                            batch.append(
                                (0..<columns.count).map { index in
                                    switch row[index] as DatabaseValue {
                                    case let value where value.isNull: return .null
                                    case let value:
                                        if case .int64(let integer) = value.storage { return .integer(integer) }
                                        if case .blob(let data) = value.storage { return .bytes([UInt8](data)) }
                                        return .bytes([UInt8]((String.fromDatabaseValue(value) ?? "").utf8))
                                    }
                                })
                            if batch.count == batchSize, !send() { return }
                        }
                        if !batch.isEmpty, !send() { return }
                    }
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        return ExportSequence(batches: stream, room: room)
    }
}

/// The batches of an export; asking for one lets the reader read the one after it.
public struct ExportSequence: AsyncSequence, Sendable {
    public typealias Element = ExportBatch
    let batches: AsyncThrowingStream<ExportBatch, any Error>
    let room: DispatchSemaphore

    public struct AsyncIterator: AsyncIteratorProtocol {
        var batches: AsyncThrowingStream<ExportBatch, any Error>.AsyncIterator
        let room: DispatchSemaphore

        public mutating func next() async throws -> ExportBatch? {
            let batch = try await batches.next()
            room.signal()
            return batch
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(batches: batches.makeAsyncIterator(), room: room)
    }
}

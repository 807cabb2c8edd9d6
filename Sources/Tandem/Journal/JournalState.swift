internal import GRDBSQLite

/// The journal state of a container's write transaction, read by the SQL functions the
/// journal triggers call (`tandem_journal_token()`, `tandem_journal_stamp()`,
/// `tandem_journal_stamps()`).
///
/// `@unchecked Sendable`: the fields are written only by ``Journal/write(_:state:author:context:body:)``
/// inside the container's write transaction, and read only by the SQL functions that the
/// triggers of that same transaction's statements call, synchronously, on the same writer
/// connection. GRDB runs every write of a container on its one serial writer queue, so a
/// write and the function calls it causes never overlap with another write. Reader
/// connections also register the functions but never run triggers (they cannot write).
final class JournalState: @unchecked Sendable {
    /// `nil` outside a journaled write: the functions then raise an error.
    private(set) var token: Int64?
    private(set) var stamp = ""
    private(set) var stampText: ContiguousArray<CChar> = []
    private(set) var stampsText: ContiguousArray<CChar> = []

    func begin(token: Int64, stamp: HLCTimestamp) {
        self.token = token
        self.stamp = stamp.description
        stampText = ContiguousArray(self.stamp.utf8CString)
        stampsText = ContiguousArray("{\"*\":\"\(self.stamp)\"}".utf8CString)
    }

    func end() { token = nil }

    static let outsideMessage = "this Tandem store journals every change: write through ModelContext.save() or ModelContainer.write(author:_:), not a bare SQLite connection"

    /// Defines the journal functions on a connection.
    func register(in db: Database) throws {
        let pointer = Unmanaged.passUnretained(self).toOpaque()
        let flags = SQLITE_UTF8 | 0x000200000   // SQLITE_INNOCUOUS: usable from triggers under trusted_schema=OFF
        let token: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = { context, _, _ in
            let state = Unmanaged<JournalState>.fromOpaque(sqlite3_user_data(context)!).takeUnretainedValue()
            guard let token = state.token else { return sqlite3_result_error(context, JournalState.outsideMessage, -1) }
            sqlite3_result_int64(context, token)
        }
        let stamp: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = { context, _, _ in
            let state = Unmanaged<JournalState>.fromOpaque(sqlite3_user_data(context)!).takeUnretainedValue()
            guard state.token != nil else { return sqlite3_result_error(context, JournalState.outsideMessage, -1) }
            state.stampText.withUnsafeBufferPointer { sqlite3_result_text(context, $0.baseAddress, Int32($0.count - 1), sqliteTransient) }
        }
        let stamps: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = { context, _, _ in
            let state = Unmanaged<JournalState>.fromOpaque(sqlite3_user_data(context)!).takeUnretainedValue()
            guard state.token != nil else { return sqlite3_result_error(context, JournalState.outsideMessage, -1) }
            state.stampsText.withUnsafeBufferPointer { sqlite3_result_text(context, $0.baseAddress, Int32($0.count - 1), sqliteTransient) }
        }
        for (name, function) in [("tandem_journal_token", token), ("tandem_journal_stamp", stamp), ("tandem_journal_stamps", stamps)] {
            let code = sqlite3_create_function_v2(db.sqliteConnection, name, 0, flags, pointer, function, nil, nil, nil)
            if code != SQLITE_OK { throw StoreError(.sqlite, "defining the SQL function \(name) failed with code \(code)") }
        }
    }
}

internal import GRDBSQLite

/// The journal state of a container's write transaction, read by the SQL functions the
/// journal triggers call (`tandem_journal_token()`, `tandem_journal_stamps()`,
/// `tandem_journal_restamp(…)`).
///
/// `@unchecked Sendable`: the fields are written only by ``Journal/write(_:journal:origin:marker:body:)``
/// inside the container's write transaction, and read only by the SQL functions that the
/// triggers of that same transaction's statements call, synchronously, on the same writer
/// connection. GRDB runs every write of a container on its one serial writer queue, so a
/// write and the function calls it causes never overlap with another write. Reader
/// connections also register the functions but never run triggers (they cannot write).
final class JournalState: @unchecked Sendable {
    /// `nil` outside a journaled write: the functions then raise an error.
    private(set) var token: Int64?
    private(set) var stamp = ""
    private(set) var stampsText: ContiguousArray<CChar> = []

    /// Inside ``Journal/write(_:journal:origin:marker:body:)`` with a marker: the triggers
    /// journal nothing (`tandem_journal_on()` is false).
    private(set) var suppressed = false

    func begin(token: Int64, stamp: HLCTimestamp, suppressed: Bool = false) {
        self.token = token
        self.suppressed = suppressed
        self.stamp = stamp.description
        stampsText = ContiguousArray("{\"*\":\"\(self.stamp)\"}".utf8CString)
    }

    func end() {
        token = nil
        suppressed = false
    }

    /// Binds the `{"*": stamp}` object of the current transaction to a statement parameter.
    func bindStamps(to statement: OpaquePointer, at index: Int32) {
        stampsText.withUnsafeBufferPointer { _ = sqlite3_bind_text(statement, index, $0.baseAddress, Int32($0.count - 1), sqliteTransient) }
    }

    static let outsideMessage = "this Tandem store journals every change: write through ModelContext.save() or ModelContainer.write(author:_:), not a bare SQLite connection"

    /// Defines the journal functions on a connection.
    func register(in db: Database) throws {
        let pointer = Unmanaged.passUnretained(self).toOpaque()
        let flags = SQLITE_UTF8 | 0x000200000  // SQLITE_INNOCUOUS: usable from triggers under trusted_schema=OFF
        let token: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = { context, _, _ in
            let state = Unmanaged<JournalState>.fromOpaque(sqlite3_user_data(context)!).takeUnretainedValue()
            guard let token = state.token else { return sqlite3_result_error(context, JournalState.outsideMessage, -1) }
            sqlite3_result_int64(context, token)
        }
        let stamps: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = { context, _, _ in
            let state = Unmanaged<JournalState>.fromOpaque(sqlite3_user_data(context)!).takeUnretainedValue()
            guard state.token != nil else { return sqlite3_result_error(context, JournalState.outsideMessage, -1) }
            state.stampsText.withUnsafeBufferPointer { sqlite3_result_text(context, $0.baseAddress, Int32($0.count - 1), sqliteTransient) }
        }
        // tandem_journal_restamp(stamps, changed1, name1, …): `stamps` (JSON or NULL) with
        // the changed columns set to the transaction's stamp.
        let restamp: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = { context, count, arguments in
            let state = Unmanaged<JournalState>.fromOpaque(sqlite3_user_data(context)!).takeUnretainedValue()
            guard state.token != nil, let arguments, count >= 1, (count - 1) % 2 == 0 else {
                return sqlite3_result_error(context, JournalState.outsideMessage, -1)
            }
            var object: [String: String] = [:]
            if let text = sqlite3_value_text(arguments[0]) {
                let json = String(cString: text)
                guard let parsed = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: String] else {
                    return sqlite3_result_error(context, "the row's \"#hlc\" stamps are not a JSON object of stamps", -1)
                }
                object = parsed
            }
            var index = 1
            while index < Int(count) {
                if sqlite3_value_int(arguments[index]) != 0, let name = sqlite3_value_text(arguments[index + 1]) {
                    object[String(cString: name)] = state.stamp
                }
                index += 2
            }
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
            data.withUnsafeBytes { sqlite3_result_text(context, $0.baseAddress?.assumingMemoryBound(to: CChar.self), Int32($0.count), sqliteTransient) }
        }
        // tandem_journal_on(): whether the triggers journal (outside a write too, so that a
        // bare connection's write reaches tandem_journal_token() and its error).
        let on: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = { context, _, _ in
            let state = Unmanaged<JournalState>.fromOpaque(sqlite3_user_data(context)!).takeUnretainedValue()
            sqlite3_result_int(context, state.suppressed ? 0 : 1)
        }
        let functions = [
            ("tandem_journal_on", 0, on),
            ("tandem_journal_restamp", -1, restamp), ("tandem_journal_token", 0, token), ("tandem_journal_stamps", 0, stamps),
            ("tandem_journal_values", -1, JournalValueCoding.pack), ("tandem_journal_changes", -1, JournalValueCoding.packChanged),
        ]
        for (name, arguments, function) in functions {
            let code = sqlite3_create_function_v2(db.sqliteConnection, name, Int32(arguments), flags, pointer, function, nil, nil, nil)
            if code != SQLITE_OK { throw StoreError(.sqlite, "defining the SQL function \(name) failed with code \(code)") }
        }
    }
}

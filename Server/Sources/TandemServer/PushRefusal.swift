/// Why a push's storage transaction refused one of its changes: a domain error, turned into
/// an HTTP answer by the push route (422 with ``code``), never thrown as one from inside the
/// transaction.
///
/// ```swift
/// throw PushRefusal.wrongEntity(record: uri, stored: "Tag", sent: "Item")
/// ```
public struct PushRefusal: Error, Sendable, Equatable {
    /// The wire error code (`invalid_record`).
    public var code: String
    public var message: String

    /// A change names a record of another entity than the one stored.
    public static func wrongEntity(record: String, stored: String, sent: String) -> PushRefusal {
        PushRefusal(code: "invalid_record", message: "\(record) is a \(stored), not a \(sent)")
    }
}

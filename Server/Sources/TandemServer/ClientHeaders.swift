import HTTPTypes

/// Who a sync request comes from, as its client says (feature `client-activity`): the
/// `Tandem-Client` header (an id of 1–64 letters, digits, `.`, `_` or `-`: the sync engine
/// sends its store's clock node, 16 hex digits) and, on pulls, `Tandem-Pending` (the local
/// changes it has not pushed yet). Both optional; the dashboard lists clients that send them.
///
/// ```swift
/// let client = try ClientHeaders(request.headers)   // nil without Tandem-Client
/// ```
public struct ClientHeaders: Sendable, Hashable {
    public var id: String
    public var pending: Int?

    public init(id: String, pending: Int? = nil) {
        self.id = id
        self.pending = pending
    }

    static let clientName = HTTPField.Name("Tandem-Client")!
    static let pendingName = HTTPField.Name("Tandem-Pending")!

    /// - Throws: 400 `invalid_client` for an id or a pending count that is not one.
    init?(_ fields: HTTPFields) throws {
        guard let id = fields[Self.clientName] else {
            if fields[Self.pendingName] != nil {
                throw APIError.badRequest("invalid_client", "Tandem-Pending needs a Tandem-Client header naming the client it counts for")
            }
            return nil
        }
        guard (1...64).contains(id.utf8.count),
            id.utf8.allSatisfy({ byte in
                (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) || byte == 0x2E || byte == 0x5F || byte == 0x2D
            })
        else {
            throw APIError.badRequest("invalid_client", "Tandem-Client must be 1–64 letters, digits, '.', '_' or '-' (the sync engine sends its store's clock node)")
        }
        self.id = id
        if let text = fields[Self.pendingName] {
            guard (1...18).contains(text.utf8.count), text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let count = Int(text) else {
                throw APIError.badRequest("invalid_client", "Tandem-Pending must be a whole number of local changes, 0 or more")
            }
            pending = count
        }
    }
}

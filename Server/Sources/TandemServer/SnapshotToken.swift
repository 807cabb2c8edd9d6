import Foundation

/// Where a snapshot read stands between two pages: the log position P the snapshot is of (a
/// ``Cursor``, with its dataset tag and epoch) and the URI of the last record sent, as opaque
/// text (`s1.` + base64url). The snapshot's last page answers the pull cursor at P instead.
///
/// ```swift
/// let token = SnapshotToken(cursor: Cursor(scope, position: 42), after: "tandem://d/Todo/…")
/// SnapshotToken(token.text) == token   // true
/// ```
struct SnapshotToken: Equatable {
    var cursor: Cursor
    /// The URI of the last record sent.
    var after: String

    init(cursor: Cursor, after: String) {
        self.cursor = cursor
        self.after = after
    }

    /// Reads a token's text; `nil` when it is not one.
    init?(_ text: String) {
        guard text.hasPrefix("s1.") else { return nil }
        var base64 = String(text.dropFirst(3)).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64), data.count > 24, let uri = String(data: data.dropFirst(24), encoding: .utf8) else { return nil }
        let cursorText =
            "c3."
            + data.prefix(24).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        guard let cursor = Cursor(cursorText) else { return nil }
        self.init(cursor: cursor, after: uri)
    }

    var text: String {
        var base64 = String(cursor.text.dropFirst(3)).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        let bytes = Data(base64Encoded: base64)! + Data(after.utf8)
        return "s1."
            + bytes.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}

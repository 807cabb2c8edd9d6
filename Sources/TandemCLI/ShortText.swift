/// A text as a person reads it in a terminal: one longer than 2 000 bytes (a refused 20 MB
/// value) is cut, saying how long it is and that `--json` prints it whole.
///
/// ```swift
/// print(ShortText.cut(change.change))
/// ```
enum ShortText {
    static let limit = 2_000

    static func cut(_ text: String) -> String {
        let bytes = text.utf8.count
        guard bytes > limit else { return text }
        return String(decoding: text.utf8.prefix(limit), as: UTF8.self) + "… (\(bytes) bytes; --json prints all)"
    }
}

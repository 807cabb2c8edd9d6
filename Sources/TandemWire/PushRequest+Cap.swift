/// The server's cap on changes per push, as its `batch_too_large` answer names it.
///
/// The message is the contract: servers since the first release name their cap in it ("… a
/// push holds at most 1000"), and clients cut their next batches to it. Both sides use these
/// two functions, so the words cannot drift apart.
///
/// ```swift
/// let message = PushRequest.tooManyChangesMessage(2_500, cap: 1_000)
/// PushRequest.cap(inTooManyChangesMessage: message)   // 1000
/// ```
extension PushRequest {
    /// The `batch_too_large` message for a push of `count` changes against `cap`.
    public static func tooManyChangesMessage(_ count: Int, cap: Int) -> String {
        "\(count) changes; a push holds at most \(cap)"
    }

    /// The cap a `batch_too_large` message names; `nil` when it names none.
    public static func cap(inTooManyChangesMessage message: String) -> Int? {
        guard let range = message.range(of: "at most ", options: .backwards) else { return nil }
        return Int(message[range.upperBound...].prefix { $0.isNumber })
    }
}

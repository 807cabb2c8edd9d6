import Foundation

/// A pull cursor: the dataset and the last log position returned, as opaque text (`c1.` +
/// base64url), so a cursor cannot be used on another dataset.
struct Cursor: Equatable {
    var dataset: Int64
    var position: Int64

    init(dataset: Int64, position: Int64) {
        self.dataset = dataset
        self.position = position
    }

    init?(_ text: String) {
        guard text.hasPrefix("c1.") else { return nil }
        var base64 = String(text.dropFirst(3)).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64), let plain = String(data: data, encoding: .utf8) else { return nil }
        let parts = plain.split(separator: ":")
        guard parts.count == 2, let dataset = Int64(parts[0]), let position = Int64(parts[1]), position >= 0 else { return nil }
        self.dataset = dataset
        self.position = position
    }

    var text: String {
        "c1."
            + Data("\(dataset):\(position)".utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}

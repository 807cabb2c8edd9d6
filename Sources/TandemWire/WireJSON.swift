public import Foundation

/// A fast JSON writer for the wire types: the same JSON their `Codable` conformances produce
/// (members in sorted order, so the text is canonical), without `JSONEncoder`'s generic
/// machinery. The server writes log entries and answers inside its one write transaction,
/// where `JSONEncoder` was a third of its CPU.
///
/// ```swift
/// let data = WireJSON.data { $0.append(response) }    // == JSONEncoder (sortedKeys) semantics
/// ```
public struct WireJSON {
    public private(set) var text = ""

    public init() {
        text.reserveCapacity(256)
    }

    /// Builds JSON text with `body` and returns its UTF-8 bytes.
    public static func data(_ body: (inout WireJSON) -> Void) -> Data {
        var writer = WireJSON()
        body(&writer)
        return Data(writer.text.utf8)
    }

    public mutating func raw(_ text: String) { self.text += text }

    public mutating func string(_ value: String) {
        text += "\""
        var needsEscaping = false
        for unit in value.utf8 where unit < 0x20 || unit == 0x22 || unit == 0x5C {
            needsEscaping = true
            break
        }
        if !needsEscaping {
            text += value
        } else {
            for scalar in value.unicodeScalars {
                switch scalar {
                case "\"": text += "\\\""
                case "\\": text += "\\\\"
                case "\n": text += "\\n"
                case "\r": text += "\\r"
                case "\t": text += "\\t"
                case _ where scalar.value < 0x20:
                    let hex = String(scalar.value, radix: 16)
                    text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                default: text.unicodeScalars.append(scalar)
                }
            }
        }
        text += "\""
    }

    public mutating func number(_ value: Int64) { text += String(value) }

    /// An object whose members are written by `members`, called with the sorted keys.
    public mutating func object<Value>(_ dictionary: [String: Value], _ value: (inout WireJSON, Value) -> Void) {
        text += "{"
        for (index, key) in dictionary.keys.sorted().enumerated() {
            if index > 0 { text += "," }
            string(key)
            text += ":"
            value(&self, dictionary[key]!)
        }
        text += "}"
    }

    public mutating func array<Element>(_ elements: [Element], _ element: (inout WireJSON, Element) -> Void) {
        text += "["
        for (index, item) in elements.enumerated() {
            if index > 0 { text += "," }
            element(&self, item)
        }
        text += "]"
    }

    public mutating func append(_ value: WireValue) {
        switch value {
        case .null: text += "null"
        case .bool(let flag): text += flag ? "true" : "false"
        case .integer(let integer): number(integer)
        case .real(let real): text += real.isFinite ? "\(real)" : "null"
        case .text(let string): self.string(string)
        case .bytes(let data):
            text += "{\"bytes\":"
            string(data.base64EncodedString())
            text += "}"
        }
    }

    public mutating func append(_ change: WireChange) {
        text += "{\"entity\":"
        string(change.entity)
        text += ",\"kind\":"
        string(change.kind.rawValue)
        text += ",\"record\":"
        string(change.record)
        text += ",\"stamps\":"
        object(change.stamps) { $0.string($1) }
        text += ",\"values\":"
        object(change.values) { $0.append($1) }
        text += "}"
    }

    public mutating func append(_ lost: LostValue) {
        text += "{\"attribute\":"
        string(lost.attribute)
        text += ",\"stamp\":"
        string(lost.stamp)
        text += ",\"value\":"
        append(lost.value)
        text += ",\"winningStamp\":"
        string(lost.winningStamp)
        text += ",\"winningValue\":"
        append(lost.winningValue)
        text += "}"
    }

    public mutating func append(_ response: PushResponse) {
        text += "{\"outcomes\":"
        array(response.outcomes) { writer, outcome in
            writer.raw("{\"applied\":")
            writer.array(outcome.applied) { $0.string($1) }
            writer.raw(",\"lost\":")
            writer.array(outcome.lost) { $0.append($1) }
            if let position = outcome.position {
                writer.raw(",\"position\":")
                writer.number(position)
            }
            writer.raw("}")
        }
        text += ",\"serverTime\":"
        number(response.serverTime)
        text += "}"
    }

    public mutating func append(_ request: PushRequest) {
        text += "{\"changes\":"
        array(request.changes) { $0.append($1) }
        text += ",\"schemaVersion\":"
        number(Int64(request.schemaVersion))
        text += "}"
    }

    public mutating func append(_ response: PullResponse) {
        text += "{\"changes\":"
        array(response.changes) { writer, entry in
            writer.raw("{\"change\":")
            writer.append(entry.change)
            writer.raw(",\"position\":")
            writer.number(entry.position)
            writer.raw(",\"schemaVersion\":")
            writer.number(Int64(entry.schemaVersion))
            writer.raw("}")
        }
        text += ",\"hasMore\":"
        text += response.hasMore ? "true" : "false"
        text += ",\"nextCursor\":"
        string(response.nextCursor)
        text += ",\"serverTime\":"
        number(response.serverTime)
        text += "}"
    }
}

extension Data {
    /// Decodes hexadecimal text (either case); `nil` when malformed.
    init?(hexString: String) {
        let utf8 = Array(hexString.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var bytes = [UInt8]()
        bytes.reserveCapacity(utf8.count / 2)
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 48...57: c - 48
            case 65...70: c - 55
            case 97...102: c - 87
            default: nil
            }
        }
        var i = 0
        while i < utf8.count {
            guard let high = nibble(utf8[i]), let low = nibble(utf8[i + 1]) else { return nil }
            bytes.append(high << 4 | low)
            i += 2
        }
        self.init(bytes)
    }
}

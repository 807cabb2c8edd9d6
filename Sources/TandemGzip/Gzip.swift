import CZlib

/// gzip (RFC 1952) compression of whole buffers, through the system's zlib. The server
/// reads `Content-Encoding: gzip` bodies and answers gzip to `Accept-Encoding: gzip`; the
/// sync client compresses large pushes.
///
/// ```swift
/// let packed = try Gzip.compress(Array(json))
/// let json = try Gzip.decompress(packed, limit: 8 << 20)
/// ```
public enum Gzip {
    /// Compresses `input` into one gzip member.
    ///
    /// - Throws: ``GzipError`` when zlib fails (out of memory).
    public static func compress(_ input: some Collection<UInt8>, level: Int32 = 6) throws(GzipError) -> [UInt8] {
        var stream = z_stream()
        guard tandem_deflate_init_gzip(&stream, level) == Z_OK else { throw GzipError(.failed, "zlib could not start a gzip stream") }
        defer { deflateEnd(&stream) }
        // Read in place when the bytes are contiguous, into an output zlib fills itself: a
        // server answer of a megabyte was copied and zeroed first, a fifth of compressing it.
        var status: Int32 = Z_OK
        func run(_ inputBuffer: UnsafeBufferPointer<UInt8>) -> [UInt8] {
            let bound = Int(deflateBound(&stream, uLong(inputBuffer.count))) + 32
            return [UInt8](unsafeUninitializedCapacity: bound) { outputBuffer, count in
                stream.next_in = UnsafeMutablePointer(mutating: inputBuffer.baseAddress)
                stream.avail_in = uInt(inputBuffer.count)
                stream.next_out = outputBuffer.baseAddress
                stream.avail_out = uInt(outputBuffer.count)
                status = deflate(&stream, Z_FINISH)
                count = status == Z_STREAM_END ? Int(stream.total_out) : 0
            }
        }
        let output = input.withContiguousStorageIfAvailable(run) ?? Array(input).withUnsafeBufferPointer(run)
        guard status == Z_STREAM_END else { throw GzipError(.failed, "zlib could not compress (status \(status))") }
        return output
    }

    /// Decompresses a gzip stream (one or more members), refusing to produce more than
    /// `limit` bytes: a small body cannot expand into a huge one.
    ///
    /// - Throws: ``GzipError`` with code `.corrupt` when `input` is not gzip or is cut short,
    ///   `.tooLarge` when the output would pass `limit`.
    public static func decompress(_ input: some Collection<UInt8>, limit: Int) throws(GzipError) -> [UInt8] {
        let source = Array(input)
        guard !source.isEmpty else { throw GzipError(.corrupt, "the gzip data is empty") }
        var output: [UInt8] = []
        output.reserveCapacity(min(limit, max(source.count * 4, 4096)))
        var offset = 0
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        repeat {
            var stream = z_stream()
            guard tandem_inflate_init_gzip(&stream) == Z_OK else { throw GzipError(.failed, "zlib could not start a gzip stream") }
            defer { inflateEnd(&stream) }
            var status: Int32 = Z_OK
            try source.withUnsafeBufferPointer { (inputBuffer) throws(GzipError) in
                stream.next_in = UnsafeMutablePointer(mutating: inputBuffer.baseAddress! + offset)
                stream.avail_in = uInt(inputBuffer.count - offset)
                while status != Z_STREAM_END {
                    let produced: Int = chunk.withUnsafeMutableBufferPointer { chunkBuffer in
                        stream.next_out = chunkBuffer.baseAddress
                        stream.avail_out = uInt(chunkBuffer.count)
                        status = inflate(&stream, Z_NO_FLUSH)
                        return chunkBuffer.count - Int(stream.avail_out)
                    }
                    guard status == Z_OK || status == Z_STREAM_END else {
                        throw GzipError(.corrupt, status == Z_BUF_ERROR ? "the gzip data is cut short" : "the data is not valid gzip")
                    }
                    guard output.count + produced <= limit else {
                        throw GzipError(.tooLarge, "the gzip data expands past the limit of \(limit) bytes")
                    }
                    output.append(contentsOf: chunk[0..<produced])
                    if status == Z_OK, produced == 0, stream.avail_in == 0 {
                        throw GzipError(.corrupt, "the gzip data is cut short")
                    }
                }
                offset = inputBuffer.count - Int(stream.avail_in)
            }
        } while offset < source.count
        return output
    }
}

/// Why gzip data could not be read or written.
public struct GzipError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, extensible like an enum.
    public struct Code: RawRepresentable, Hashable, Sendable {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Not gzip, or cut short.
        public static let corrupt = Code(rawValue: "corrupt")
        /// The output would pass the caller's limit.
        public static let tooLarge = Code(rawValue: "too_large")
        /// zlib itself failed.
        public static let failed = Code(rawValue: "failed")
    }

    public var code: Code
    public var message: String
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
    public var description: String { message }
}

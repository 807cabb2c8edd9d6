/// Where a declaration is written: a file and a 1-based line.
///
/// ```swift
/// SourceLocation(file: "Sources/App/Todo.swift", line: 12).description   // "Sources/App/Todo.swift:12"
/// ```
public struct SourceLocation: Sendable, Hashable, Codable, CustomStringConvertible {
    public var file: String
    public var line: Int

    public init(file: String, line: Int) {
        self.file = file
        self.line = line
    }

    public var description: String { "\(file):\(line)" }
}

import Tandem

/// An enum stored by its `Int` raw value (an INTEGER column).
enum Priority: Int, Codable, CaseIterable {
    case low, normal, high
}

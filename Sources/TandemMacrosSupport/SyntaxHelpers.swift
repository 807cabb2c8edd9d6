import SwiftSyntax

extension AttributeListSyntax {
    /// The first attribute spelled `@name` or `@Module.name`, ignoring `#if` clauses.
    func attribute(named name: String) -> AttributeSyntax? {
        for element in self {
            if case .attribute(let attribute) = element, attribute.simpleName == name {
                return attribute
            }
        }
        return nil
    }
}

extension AttributeSyntax {
    /// The attribute's name without its module: `Transient` for `@Tandem.Transient`.
    var simpleName: String? {
        if let identifier = attributeName.as(IdentifierTypeSyntax.self) {
            return identifier.name.text
        }
        if let member = attributeName.as(MemberTypeSyntax.self) {
            return member.name.text
        }
        return nil
    }
}

extension DeclModifierListSyntax {
    /// The modifier spelled with `keyword`, if present.
    func modifier(_ keyword: Keyword) -> DeclModifierSyntax? {
        first { $0.name.tokenKind == .keyword(keyword) }
    }
}

extension TokenSyntax {
    /// The identifier as the user means it: `default` for `` `default` ``.
    var unescapedText: String {
        let text = self.text
        if text.count >= 2, text.hasPrefix("`"), text.hasSuffix("`") {
            return String(text.dropFirst().dropLast())
        }
        return text
    }
}

extension String {
    /// The string as the source of a Swift string literal, quotes included.
    var swiftStringLiteral: String {
        var result = "\""
        for scalar in unicodeScalars {
            switch scalar {
            case "\\": result += "\\\\"
            case "\"": result += "\\\""
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case "\0": result += "\\0"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    result += "\\u{\(String(scalar.value, radix: 16))}"
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }
}

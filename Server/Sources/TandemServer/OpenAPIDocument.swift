import Foundation

/// `Server/openapi.yaml`, the protocol's description, shipped as a resource of this module
/// and served at `GET /openapi.yaml`.
enum OpenAPIDocument {
    static let text: String = {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "yaml"),
            let text = try? String(contentsOf: url, encoding: .utf8)
        else {
            return "# openapi.yaml is missing from this build's resources\n"
        }
        return text
    }()
}

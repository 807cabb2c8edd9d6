import TandemSchema
import TandemSchemaExtract

/// Extracts the schema of one Swift source text.
func extract(_ source: String, path: String = "Models.swift") throws -> ExtractedSchema {
    try SchemaExtractor().extract([SourceText(path: path, text: source)])
}

/// The active findings of checking `candidate` against `baseline`, both given as Swift sources.
func check(_ baseline: String, _ candidate: String) throws -> [SchemaFinding] {
    let old = try extract(baseline, path: "v1.swift")
    let new = try extract(candidate, path: "v2.swift")
    let check = CompatibilityCheck(allowances: new.allowances, locations: new.locations)
    return check.run(baselines: [.init(name: "v1.json", schema: old.schema)], candidate: new.schema).findings
}

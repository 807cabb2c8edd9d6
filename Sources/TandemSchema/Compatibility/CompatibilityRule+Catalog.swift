extension CompatibilityRule {
    /// A new model: safe.
    public static let entityAdded = CompatibilityRule(
        id: "ENTITY_ADDED",
        category: .entity,
        change: "a new model",
        verdict: .safe,
        rationale: "Old clients do not know the entity; the server keeps its records and old clients ignore them.",
        hint: "Nothing to do.")
    /// A model removed: breaking.
    public static let entityRemoved = CompatibilityRule(
        id: "ENTITY_REMOVED",
        category: .entity,
        change: "a model removed",
        verdict: .breaking,
        rationale: "Old clients keep creating and editing records of the entity; new clients can no longer store them, so their changes are lost.",
        hint: "Keep the model (mark it deprecated in your code) until no client of an older version syncs.")
    /// A model renamed with @Model(originalName:): safe (breaking without originalName).
    public static let entityRenamed = CompatibilityRule(
        id: "ENTITY_RENAMED",
        category: .entity,
        change: "a model renamed with @Model(originalName:) (or a removed and an added model of the same shape)",
        verdict: .safe,
        verdictNote: "breaking without originalName, or when originalName does not name the model's first name (the one its records sync under)",
        rationale:
            "A renamed model keeps its first name, its originalName, for good: record URIs, the store's table, the journal and the wire use it, so clients of every version read and write its records under their own class name. Without originalName the new name is a new entity: old clients write the old name, new clients the new one, and neither reads the other's records.",
        hint: "Declare the rename with @Model(originalName: \"FirstName\") and keep it the model's first name through every later rename.")
    /// An optional attribute added: safe.
    public static let attributeAddedOptional = CompatibilityRule(
        id: "ATTRIBUTE_ADDED_OPTIONAL",
        category: .attribute,
        change: "an optional attribute added",
        verdict: .safe,
        rationale: "Old clients do not send the attribute; new clients read it as nil.",
        hint: "Nothing to do.")
    /// An attribute with a default value added: warning.
    public static let attributeAddedWithDefault = CompatibilityRule(
        id: "ATTRIBUTE_ADDED_WITH_DEFAULT",
        category: .attribute,
        change: "an attribute with a default value added",
        verdict: .warning,
        rationale: "Records written by old clients get the default on new clients, even when the real value is something else.",
        hint: "Make sure the default is a value that means 'unknown', or add the attribute as optional.")
    /// A non-optional attribute without a default added: breaking.
    public static let attributeAddedRequired = CompatibilityRule(
        id: "ATTRIBUTE_ADDED_REQUIRED",
        category: .attribute,
        change: "a non-optional attribute without a default added",
        verdict: .breaking,
        rationale: "Records written by old clients have no value for it, so new clients cannot load them.",
        hint: "Add it as optional (`T?`) or with a default value.")
    /// A stored property removed: breaking.
    public static let attributeRemoved = CompatibilityRule(
        id: "ATTRIBUTE_REMOVED",
        category: .attribute,
        change: "a stored property removed",
        verdict: .breaking,
        rationale: "Old clients keep sending the value and expect to receive it; it is dropped by new clients, and old clients receive records without it.",
        hint: "Keep the property (unused) until no older client syncs; to rename it, keep the old one too.")
    /// An attribute renamed with @Attribute(originalName:): breaking.
    public static let attributeRenamed = CompatibilityRule(
        id: "ATTRIBUTE_RENAMED",
        category: .attribute,
        change: "an attribute renamed with @Attribute(originalName:)",
        verdict: .safe,
        verdictNote: "breaking when originalName does not name the attribute's first name (the one it syncs under)",
        rationale:
            "A renamed attribute syncs under its first name, its originalName: clients of every version read and write it under their own name. An originalName that names a later name changes what it syncs under, and old clients no longer read it.",
        hint: "Keep originalName the attribute's first name through every later rename.")
    /// An attribute's type changed to an incompatible one: breaking (warning for Int ↔ Int64 and UInt ↔ UInt64 (the same width on 64-bit platforms)).
    public static let attributeTypeChanged = CompatibilityRule(
        id: "ATTRIBUTE_TYPE_CHANGED",
        category: .attribute,
        change: "an attribute's type changed to an incompatible one",
        verdict: .breaking,
        verdictNote: "warning for Int ↔ Int64 and UInt ↔ UInt64 (the same width on 64-bit platforms)",
        rationale: "Values written by one version cannot be decoded by the other.",
        hint: "Add a new attribute with the new type and migrate values in your code.")
    /// A number widened (Int32 → Int64, Float → Double): breaking.
    public static let attributeNumericWidened = CompatibilityRule(
        id: "ATTRIBUTE_NUMERIC_WIDENED",
        category: .attribute,
        change: "a number widened (Int32 → Int64, Float → Double)",
        verdict: .breaking,
        rationale: "New clients write values old clients cannot hold: they overflow or lose precision on old clients.",
        hint: "Add a new attribute of the wider type and keep writing both until old clients are gone.")
    /// A number narrowed (Int64 → Int32, Double → Float): breaking.
    public static let attributeNumericNarrowed = CompatibilityRule(
        id: "ATTRIBUTE_NUMERIC_NARROWED",
        category: .attribute,
        change: "a number narrowed (Int64 → Int32, Double → Float)",
        verdict: .breaking,
        rationale: "Old clients write values the new type cannot hold: they are truncated or rejected.",
        hint: "Keep the wider type.")
    /// An optional attribute made non-optional: breaking.
    public static let attributeOptionalToRequired = CompatibilityRule(
        id: "ATTRIBUTE_OPTIONAL_TO_REQUIRED",
        category: .attribute,
        change: "an optional attribute made non-optional",
        verdict: .breaking,
        rationale: "Old clients send nil, which new clients cannot store.",
        hint: "Keep it optional and treat nil in your code.")
    /// A non-optional attribute made optional: breaking (warning when the old attribute had a default value (old clients then store that default)).
    public static let attributeRequiredToOptional = CompatibilityRule(
        id: "ATTRIBUTE_REQUIRED_TO_OPTIONAL",
        category: .attribute,
        change: "a non-optional attribute made optional",
        verdict: .breaking,
        verdictNote: "warning when the old attribute had a default value (old clients then store that default)",
        rationale: "New clients send nil, which old clients cannot store.",
        hint: "Keep it non-optional, or give the old version a default value first.")
    /// An attribute's default value changed: warning.
    public static let attributeDefaultChanged = CompatibilityRule(
        id: "ATTRIBUTE_DEFAULT_CHANGED",
        category: .attribute,
        change: "an attribute's default value changed",
        verdict: .warning,
        rationale: "Old and new clients fill missing values differently, so the same record can differ between versions.",
        hint: "Check that both defaults are acceptable for records written by the other version.")
    /// @Attribute(.unique) added: breaking.
    public static let uniqueAdded = CompatibilityRule(
        id: "UNIQUE_ADDED",
        category: .attribute,
        change: "@Attribute(.unique) added",
        verdict: .breaking,
        rationale: "Old clients create duplicates the new version refuses, so their changes cannot be applied.",
        hint: "Deduplicate in your code and add the constraint only when no older client syncs.")
    /// @Attribute(.unique) removed: warning.
    public static let uniqueRemoved = CompatibilityRule(
        id: "UNIQUE_REMOVED",
        category: .attribute,
        change: "@Attribute(.unique) removed",
        verdict: .warning,
        rationale: "New clients may create duplicates that old clients refuse or merge.",
        hint: "Make sure duplicates are acceptable to older clients.")
    /// @Attribute(.indexed) added or removed: safe.
    public static let indexChanged = CompatibilityRule(
        id: "INDEX_CHANGED",
        category: .attribute,
        change: "@Attribute(.indexed) added or removed",
        verdict: .safe,
        rationale: "Indexes are local: they change query speed, not what is exchanged.",
        hint: "Nothing to do.")
    /// @Attribute(.preserveValueOnDeletion) added or removed: warning.
    public static let preserveOnDeletionChanged = CompatibilityRule(
        id: "PRESERVE_ON_DELETION_CHANGED",
        category: .attribute,
        change: "@Attribute(.preserveValueOnDeletion) added or removed",
        verdict: .warning,
        rationale: "Tombstones sent by one version carry the value and the other's do not; readers of deletions see different data.",
        hint: "Make sure readers of deleted records cope with the value being absent.")
    /// A field added to a composite (Codable struct) attribute: breaking (warning when the field is optional).
    public static let compositeFieldAdded = CompatibilityRule(
        id: "COMPOSITE_FIELD_ADDED",
        category: .composite,
        change: "a field added to a composite (Codable struct) attribute",
        verdict: .breaking,
        verdictNote: "warning when the field is optional",
        rationale: "Old clients do not know the field: they drop it when they write the record back, and a required field is missing in their records.",
        hint: "Add the field as optional, or add a new optional attribute to the model instead.")
    /// A field removed from a composite: breaking.
    public static let compositeFieldRemoved = CompatibilityRule(
        id: "COMPOSITE_FIELD_REMOVED",
        category: .composite,
        change: "a field removed from a composite",
        verdict: .breaking,
        rationale: "Old clients still send and require the field.",
        hint: "Keep the field until no older client syncs.")
    /// A composite field renamed (one removed, one of the same type added): breaking.
    public static let compositeFieldRenamed = CompatibilityRule(
        id: "COMPOSITE_FIELD_RENAMED",
        category: .composite,
        change: "a composite field renamed (one removed, one of the same type added)",
        verdict: .breaking,
        rationale: "Old clients send and expect the old name.",
        hint: "Keep the old field name (a CodingKeys entry can map a new Swift name to the old key).")
    /// A composite field's type or optionality changed: breaking (warning for Int ↔ Int64 and UInt ↔ UInt64).
    public static let compositeFieldRetyped = CompatibilityRule(
        id: "COMPOSITE_FIELD_RETYPED",
        category: .composite,
        change: "a composite field's type or optionality changed",
        verdict: .breaking,
        verdictNote: "warning for Int ↔ Int64 and UInt ↔ UInt64 (the same width on 64-bit platforms)",
        rationale: "Values written by one version cannot be decoded by the other.",
        hint: "Add a new optional field with the new type instead.")
    /// A composite's Swift type renamed, fields unchanged: safe.
    public static let compositeRenamed = CompatibilityRule(
        id: "COMPOSITE_TYPE_RENAMED",
        category: .composite,
        change: "a composite's Swift type renamed, fields unchanged",
        verdict: .safe,
        rationale: "Composites are stored field by field; the type name is not exchanged.",
        hint: "Nothing to do.")
    /// The storage shape changed: scalar ↔ composite ↔ JSON, T ↔ [T]: breaking.
    public static let storageShapeChanged = CompatibilityRule(
        id: "STORAGE_SHAPE_CHANGED",
        category: .attribute,
        change: "the storage shape changed: scalar ↔ composite ↔ JSON, T ↔ [T]",
        verdict: .breaking,
        rationale: "The value is stored and exchanged in a different form; neither version can read the other's.",
        hint: "Add a new attribute with the new shape and migrate values in your code.")
    /// An enum's raw type changed (Int ↔ String): breaking.
    public static let enumRawTypeChanged = CompatibilityRule(
        id: "ENUM_RAW_TYPE_CHANGED",
        category: .enumeration,
        change: "an enum's raw type changed (Int ↔ String)",
        verdict: .breaking,
        rationale: "Raw values are what is stored and exchanged; the other version cannot decode them.",
        hint: "Keep the raw type; add a new attribute with a new enum if you must change it.")
    /// An enum case's raw value changed: breaking.
    public static let enumCaseRawValueChanged = CompatibilityRule(
        id: "ENUM_CASE_RAW_VALUE_CHANGED",
        category: .enumeration,
        change: "an enum case's raw value changed",
        verdict: .breaking,
        rationale: "Stored and exchanged raw values now mean a different case, or none.",
        hint: "Keep raw values forever; rename the case in Swift but keep its raw value.")
    /// An enum case removed: breaking.
    public static let enumCaseRemoved = CompatibilityRule(
        id: "ENUM_CASE_REMOVED",
        category: .enumeration,
        change: "an enum case removed",
        verdict: .breaking,
        rationale: "Old clients still write the case; new clients cannot decode it.",
        hint: "Keep the case (deprecated) until no older client syncs.")
    /// An enum case added: warning.
    public static let enumCaseAdded = CompatibilityRule(
        id: "ENUM_CASE_ADDED",
        category: .enumeration,
        change: "an enum case added",
        verdict: .warning,
        rationale: "Old clients meet a raw value they cannot decode until they update.",
        hint: "Release the new case after every client can decode it, or handle unknown values in old clients.")
    /// An enum's cases cannot be compared (one version does not list them): warning.
    public static let enumCasesUnknown = CompatibilityRule(
        id: "ENUM_CASES_UNKNOWN",
        category: .enumeration,
        change: "an enum's cases are listed by one version and not by the other, so they cannot be compared",
        verdict: .warning,
        rationale: "A schema recorded by a running app lists the cases of CaseIterable enums only, so removed or changed raw values go unnoticed.",
        hint: "Check schemas extracted from the Swift sources (tandem schema extract lists every case), and publish them (tandem schema publish) so the server knows the cases.")
    /// Any change to an enum stored as JSON (no raw values): breaking.
    public static let enumWithoutRawValueChanged = CompatibilityRule(
        id: "ENUM_WITHOUT_RAW_VALUE_CHANGED",
        category: .enumeration,
        change: "any change to an enum stored as JSON (no raw values)",
        verdict: .breaking,
        rationale: "An enum without raw values is encoded by case name and payload labels; any change makes the other version's values undecodable.",
        hint: "Give the enum raw values (`enum Kind: String, Codable`) so cases can evolve case by case.")
    /// A field added to the element of a Codable collection: breaking (safe when the field is optional).
    public static let collectionElementFieldAdded = CompatibilityRule(
        id: "COLLECTION_ELEMENT_FIELD_ADDED",
        category: .collection,
        change: "a field added to the element of a Codable collection",
        verdict: .breaking,
        verdictNote: "safe when the field is optional",
        rationale: "Old clients decode elements without it; a required field is missing from their elements.",
        hint: "Add the field as optional.")
    /// A field removed from a collection's element: breaking.
    public static let collectionElementFieldRemoved = CompatibilityRule(
        id: "COLLECTION_ELEMENT_FIELD_REMOVED",
        category: .collection,
        change: "a field removed from a collection's element",
        verdict: .breaking,
        rationale: "Old clients still require the field in every element.",
        hint: "Keep the field until no older client syncs.")
    /// A collection element's field renamed: breaking.
    public static let collectionElementFieldRenamed = CompatibilityRule(
        id: "COLLECTION_ELEMENT_FIELD_RENAMED",
        category: .collection,
        change: "a collection element's field renamed",
        verdict: .breaking,
        rationale: "Old clients send and expect the old key.",
        hint: "Keep the old key (a CodingKeys entry can map a new Swift name to it).")
    /// A collection element's field retyped: breaking (warning for Int ↔ Int64 and UInt ↔ UInt64).
    public static let collectionElementFieldRetyped = CompatibilityRule(
        id: "COLLECTION_ELEMENT_FIELD_RETYPED",
        category: .collection,
        change: "a collection element's field retyped",
        verdict: .breaking,
        verdictNote: "warning for Int ↔ Int64 and UInt ↔ UInt64 (the same width on 64-bit platforms)",
        rationale: "Elements written by one version cannot be decoded by the other.",
        hint: "Add a new optional field instead.")
    /// A collection's type changed (element type, Array ↔ Set ↔ Dictionary): breaking.
    public static let collectionTypeChanged = CompatibilityRule(
        id: "COLLECTION_TYPE_CHANGED",
        category: .collection,
        change: "a collection's type changed (element type, Array ↔ Set ↔ Dictionary)",
        verdict: .breaking,
        rationale: "The JSON written by one version does not decode as the other's collection.",
        hint: "Add a new attribute with the new collection type.")
    /// A relationship added: safe (breaking when it is a required to-one).
    public static let relationshipAdded = CompatibilityRule(
        id: "RELATIONSHIP_ADDED",
        category: .relationship,
        change: "a relationship added",
        verdict: .safe,
        verdictNote: "breaking when it is a required to-one",
        rationale: "Old clients do not send it; an optional or to-many relationship is simply empty for their records.",
        hint: "Make a new to-one relationship optional.")
    /// A relationship removed: breaking.
    public static let relationshipRemoved = CompatibilityRule(
        id: "RELATIONSHIP_REMOVED",
        category: .relationship,
        change: "a relationship removed",
        verdict: .breaking,
        rationale: "Old clients keep sending links new clients drop.",
        hint: "Keep the relationship until no older client syncs.")
    /// A relationship renamed with originalName: breaking.
    public static let relationshipRenamed = CompatibilityRule(
        id: "RELATIONSHIP_RENAMED",
        category: .relationship,
        change: "a relationship renamed with originalName",
        verdict: .breaking,
        rationale: "Over sync, old clients send and expect the old name.",
        hint: "Keep the old name.")
    /// To-one ↔ to-many: breaking.
    public static let relationshipCardinalityChanged = CompatibilityRule(
        id: "RELATIONSHIP_CARDINALITY_CHANGED",
        category: .relationship,
        change: "to-one ↔ to-many",
        verdict: .breaking,
        rationale: "A foreign key and a set of links are stored and exchanged differently.",
        hint: "Add a new relationship and migrate the links in your code.")
    /// A relationship points at another entity: breaking.
    public static let relationshipTargetChanged = CompatibilityRule(
        id: "RELATIONSHIP_TARGET_CHANGED",
        category: .relationship,
        change: "a relationship points at another entity",
        verdict: .breaking,
        rationale: "Links written by one version point at records the other does not expect.",
        hint: "Add a new relationship to the other entity.")
    /// A delete rule changed (e.g. nullify → cascade): warning (breaking when .deny is added).
    public static let relationshipDeleteRuleChanged = CompatibilityRule(
        id: "RELATIONSHIP_DELETE_RULE_CHANGED",
        category: .relationship,
        change: "a delete rule changed (e.g. nullify → cascade)",
        verdict: .warning,
        verdictNote: "breaking when .deny is added",
        rationale: "Old and new clients delete different sets of records for the same delete; with .deny, old clients make deletes the new version refuses.",
        hint: "Check that both behaviours are acceptable; avoid adding .deny to a released model.")
    /// A relationship's inverse changed or dropped: breaking.
    public static let relationshipInverseChanged = CompatibilityRule(
        id: "RELATIONSHIP_INVERSE_CHANGED",
        category: .relationship,
        change: "a relationship's inverse changed or dropped",
        verdict: .breaking,
        rationale: "The inverse decides how links are stored (a foreign key or a join table) and kept in step; the versions would exchange different links.",
        hint: "Keep the inverse; add a new relationship for a new pairing.")

    /// Every rule, in the order `tandem schema rules` prints them.
    public static let all: [CompatibilityRule] = [
        .entityAdded,
        .entityRemoved,
        .entityRenamed,
        .attributeAddedOptional,
        .attributeAddedWithDefault,
        .attributeAddedRequired,
        .attributeRemoved,
        .attributeRenamed,
        .attributeTypeChanged,
        .attributeNumericWidened,
        .attributeNumericNarrowed,
        .attributeOptionalToRequired,
        .attributeRequiredToOptional,
        .attributeDefaultChanged,
        .uniqueAdded,
        .uniqueRemoved,
        .indexChanged,
        .preserveOnDeletionChanged,
        .compositeFieldAdded,
        .compositeFieldRemoved,
        .compositeFieldRenamed,
        .compositeFieldRetyped,
        .compositeRenamed,
        .storageShapeChanged,
        .enumRawTypeChanged,
        .enumCaseRawValueChanged,
        .enumCaseRemoved,
        .enumCaseAdded,
        .enumCasesUnknown,
        .enumWithoutRawValueChanged,
        .collectionElementFieldAdded,
        .collectionElementFieldRemoved,
        .collectionElementFieldRenamed,
        .collectionElementFieldRetyped,
        .collectionTypeChanged,
        .relationshipAdded,
        .relationshipRemoved,
        .relationshipRenamed,
        .relationshipCardinalityChanged,
        .relationshipTargetChanged,
        .relationshipDeleteRuleChanged,
        .relationshipInverseChanged,
    ]
}

/// One record change in a push: a client's journal entry, coalesced per record.
///
/// `values` and `stamps` are keyed by column name (`title`, `people.age`); every value has
/// the HLC stamp (`HLCTimestamp` text) of the edit that set it. A delete carries one stamp
/// under `"*"`.
///
/// ```swift
/// WireChange(record: "tandem://todos/Todo/5f0c…", entity: "Todo", kind: .update,
///            values: ["title": .text("Buy oat milk")], stamps: ["title": "0190a1b2c3d4-0000-00000000000000aa"])
/// ```
public struct WireChange: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Hashable, Codable {
        case insert, update, delete
        /// A many-to-many relationship of the record gained (`link`) or lost (`unlink`) a
        /// member: `values` holds one entry, the relationship's name → the member's UUID
        /// (text), and `stamps` one stamp under `"*"`. Per link, the later stamp wins; a
        /// link and an unlink with equal stamps: the link (see docs/sync.md).
        case link, unlink

        /// A link or an unlink.
        public var isLink: Bool { self == .link || self == .unlink }
    }

    /// The record URI, `tandem://<dataset>/<Entity>/<uuid>`.
    public var record: String
    public var entity: String
    public var kind: Kind
    public var values: [String: WireValue]
    public var stamps: [String: String]
    /// A delete only: the record was merged into this one (a record URI of the same entity),
    /// because both held the same `.unique` value. Replicas that still have the record carry
    /// its newer values over to the survivor and point its references there, instead of
    /// applying its delete rules.
    public var mergedInto: String?
    /// An update only, written by the server: the change carries values of a record merged
    /// into this one (the merge's update of the survivor with the loser's newer values, or a
    /// change of the loser, sent before its maker heard of the merge, pointed at the
    /// survivor). Its values were written without seeing the survivor's, so a value of the
    /// survivor it replaces lost a conflict: replicas log it (`uniqueMerge`).
    public var mergedFrom: String?

    public init(
        record: String, entity: String, kind: Kind, values: [String: WireValue] = [:], stamps: [String: String] = [:],
        mergedInto: String? = nil, mergedFrom: String? = nil
    ) {
        self.record = record
        self.entity = entity
        self.kind = kind
        self.values = values
        self.stamps = stamps
        self.mergedInto = mergedInto
        self.mergedFrom = mergedFrom
    }

    /// The stamp key of a delete.
    public static let deleteStampKey = "*"

    /// The field a link or an unlink decides on its record: `<relationship>#<member uuid>`
    /// (`#` is in no column name, so it never meets one). `nil` for other changes.
    public var linkField: String? {
        guard kind.isLink, values.count == 1, let (relationship, member) = values.first, case .text(let id) = member else { return nil }
        return relationship + "#" + id
    }
}

import Foundation
import Testing
import TandemSchema

let people = Schema.Composite(
    typeName: "People",
    fields: [
        Schema.Field(name: "name", type: .scalar(.string)),
        Schema.Field(name: "age", type: .scalar(.int)),
    ])
let priority = Schema.Enumeration(
    typeName: "Priority", rawType: .int,
    cases: [
        .init(name: "low", rawValue: "0"), .init(name: "normal", rawValue: "1"), .init(name: "high", rawValue: "2"),
    ])

let todo = Schema.Entity(
    name: "Todo",
    attributes: [
        Schema.Attribute(name: "code", type: .scalar(.string), options: [.unique, .preserveValueOnDeletion]),
        Schema.Attribute(name: "people", type: .composite(people)),
        Schema.Attribute(name: "tags", type: .collection(typeName: "Array<String>"), defaultValue: "[]"),
        Schema.Attribute(name: "priority", type: .enumeration(priority), defaultValue: ".normal"),
        Schema.Attribute(name: "weight", type: .scalar(.double), isOptional: true),
        Schema.Attribute(name: "timestamp", type: .scalar(.date), originalName: "created", defaultValue: ".now"),
    ])

@Suite("Canonical schema JSON")
struct SchemaJSONTests {
    @Test func roundTripsExactly() throws {
        let schema = Schema(entities: [todo])
        #expect(try Schema(canonicalJSON: schema.canonicalJSON()) == schema)
    }

    @Test func twoExportsAreByteIdenticalWithSortedKeysAndOptions() throws {
        let schema = Schema(entities: [todo])
        let a = try schema.canonicalJSON(), b = try Schema(canonicalJSON: a).canonicalJSON()
        #expect(a == b)
        let text = String(decoding: a, as: UTF8.self)
        #expect(text.contains(#""formatVersion" : 1"#))
        #expect(text.contains(#""options" : [\#n            "preserveValueOnDeletion",\#n            "unique"\#n          ]"#))
        let tiny = Schema(entities: [
            Schema.Entity(
                name: "N",
                attributes: [
                    Schema.Attribute(name: "t", type: .scalar(.string), options: [.unique], originalName: "o", defaultValue: "\"x\"")
                ])
        ])
        let expected = """
            {
              "entities" : [
                {
                  "attributes" : [
                    {
                      "defaultValue" : "\\"x\\"",
                      "isOptional" : false,
                      "name" : "t",
                      "options" : [
                        "unique"
                      ],
                      "originalName" : "o",
                      "type" : {
                        "kind" : "scalar",
                        "scalar" : "string"
                      }
                    }
                  ],
                  "name" : "N"
                }
              ],
              "formatVersion" : 1
            }
            """
        #expect(String(decoding: try tiny.canonicalJSON(), as: UTF8.self) == expected)
    }

    @Test func aNewerFormatVersionIsRefusedWithAnUpgradeHint() throws {
        let json = #"{"formatVersion": 99, "entities": []}"#
        #expect {
            _ = try Schema(canonicalJSON: Data(json.utf8))
        } throws: { error in
            let error = error as? SchemaError
            return error?.code == .unsupportedFormatVersion && error?.message.contains("Upgrade Tandem") == true
        }
    }

    @Test func malformedJSONNamesThePath() throws {
        let json = #"{"formatVersion": 1, "entities": [{"name": "Todo", "attributes": [{"name": "x", "type": {"kind": "scalar"}}]}]}"#
        #expect {
            _ = try Schema(canonicalJSON: Data(json.utf8))
        } throws: { error in
            let error = error as? SchemaError
            return error?.code == .invalidJSON && error?.message.contains("entities[0].attributes[0].type") == true
        }
        #expect { _ = try Schema(canonicalJSON: Data("not json".utf8)) } throws: { ($0 as? SchemaError)?.code == .invalidJSON }
    }

    @Test func columnsFollowTheNamingScheme() throws {
        var optionalPeople = todo.attributes[1]
        optionalPeople.isOptional = true
        #expect(todo.columns.map(\.name) == ["#id", "code", "people.name", "people.age", "tags", "priority", "weight", "timestamp"])
        #expect(optionalPeople.columns.map(\.name) == ["people", "people.name", "people.age"])
        #expect(optionalPeople.columns.allSatisfy { $0.isNullable })
        #expect(todo.columns.map(\.sqlType) == [.text, .text, .text, .integer, .text, .integer, .real, .real])
    }
}

@Suite("Migration planning")
struct MigrationPlanTests {
    func entity(_ attributes: [Schema.Attribute]) -> Schema { Schema(entities: [Schema.Entity(name: "Todo", attributes: attributes)]) }
    let title = Schema.Attribute(name: "title", type: .scalar(.string))

    @Test func sameSchemaNeedsNoStep() throws {
        #expect(try MigrationPlan(from: Schema(entities: [todo]), to: Schema(entities: [todo])).isEmpty)
    }

    @Test func newEntityOptionalAndDefaultedAttributesAndRenamesAreSteps() throws {
        let old = entity([title])
        var renamed = Schema.Attribute(name: "heading", type: .scalar(.string), originalName: "title")
        renamed.options = []
        let new = Schema(entities: [
            Schema.Entity(
                name: "Todo",
                attributes: [
                    renamed,
                    Schema.Attribute(name: "note", type: .scalar(.string), isOptional: true),
                    Schema.Attribute(name: "done", type: .scalar(.bool), defaultValue: "false"),
                ]),
            Schema.Entity(name: "Item", attributes: []),
        ])
        let plan = try MigrationPlan(from: old, to: new)
        #expect(plan.steps.count == 4)
        #expect(plan.steps.contains(.renameAttribute(entity: "Todo", from: "title", to: renamed)))
        #expect(plan.steps.contains(.createEntity(Schema.Entity(name: "Item", attributes: []))))
    }

    @Test(arguments: [
        (Schema.Attribute(name: "title", type: .scalar(.int)), "type changed from string to int"),
        (Schema.Attribute(name: "title", type: .scalar(.string), isOptional: true), "required attribute became optional"),
    ])
    func incompatibleChangesAreRefusedNamingEntityAndAttribute(_ changed: Schema.Attribute, _ why: String) throws {
        #expect {
            _ = try MigrationPlan(from: entity([title]), to: entity([changed]))
        } throws: { error in
            let error = error as? SchemaError
            return error?.code == .incompatibleChange && error?.changes.first?.entity == "Todo"
                && error?.changes.first?.attribute == "title" && error?.message.contains(why) == true
        }
    }

    @Test func requiredAttributeWithoutDefaultIsRefused() throws {
        #expect(throws: SchemaError.self) {
            _ = try MigrationPlan(from: entity([title]), to: entity([title, Schema.Attribute(name: "n", type: .scalar(.int))]))
        }
    }

    @Test func reshapedCompositeAndEnumRawTypeChangesAreRefused() throws {
        var reshaped = people
        reshaped.fields[1].name = "years"
        let before = entity([Schema.Attribute(name: "people", type: .composite(people))])
        #expect(throws: SchemaError.self) { _ = try MigrationPlan(from: before, to: entity([Schema.Attribute(name: "people", type: .composite(reshaped))])) }
        var stringPriority = priority
        stringPriority.rawType = .string
        let enumBefore = entity([Schema.Attribute(name: "p", type: .enumeration(priority))])
        #expect(throws: SchemaError.self) { _ = try MigrationPlan(from: enumBefore, to: entity([Schema.Attribute(name: "p", type: .enumeration(stringPriority))])) }
    }

    @Test func addingEnumCasesIsAllowedRemovingThemIsNot() throws {
        var more = priority
        more.cases?.append(.init(name: "urgent", rawValue: "3"))
        let base = entity([Schema.Attribute(name: "p", type: .enumeration(priority))])
        let grown = entity([Schema.Attribute(name: "p", type: .enumeration(more))])
        #expect(try MigrationPlan(from: base, to: grown).isEmpty)
        #expect(throws: SchemaError.self) { _ = try MigrationPlan(from: grown, to: base) }
    }

    @Test func indexOptionChangesAreIndexSteps() throws {
        let plain = entity([title])
        let indexed = entity([Schema.Attribute(name: "title", type: .scalar(.string), options: [.indexed])])
        #expect(try MigrationPlan(from: plain, to: indexed).steps == [.addIndex(entity: "Todo", attribute: indexed.entities[0].attributes[0])])
        #expect(try MigrationPlan(from: indexed, to: plain).steps == [.dropIndex(entity: "Todo", attribute: indexed.entities[0].attributes[0])])
    }

    @Test func everyRefusalIsReportedAtOnce() throws {
        let old = Schema(entities: [
            Schema.Entity(name: "Todo", attributes: [title, Schema.Attribute(name: "a", type: .scalar(.int))]),
            Schema.Entity(name: "Gone", attributes: []),
        ])
        #expect {
            _ = try MigrationPlan(from: old, to: entity([Schema.Attribute(name: "title", type: .scalar(.bool))]))
        } throws: { ($0 as? SchemaError)?.changes.count == 3 }
    }
}

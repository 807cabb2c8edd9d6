// `import Tandem` is all a user writes: models need Foundation (Date, #Predicate), the
// Observation framework (generated code), the schema vocabulary, and GRDB for the
// `container.read { db in … }` escape hatch.
@_exported public import Foundation
@_exported public import Observation
@_exported public import TandemSchema
@_exported public import GRDB

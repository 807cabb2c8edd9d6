// swift-tools-version: 6.1
import CompilerPluginSupport
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "Tandem",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .library(name: "Tandem", targets: ["Tandem"]),
        .library(name: "TandemSchema", targets: ["TandemSchema"]),
        .library(name: "TandemSchemaExtract", targets: ["TandemSchemaExtract"]),
        .executable(name: "tandem", targets: ["TandemCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/swiftlang/swift-syntax", from: "603.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        // No I/O: entity/attribute descriptions, canonical JSON, migration planning.
        .target(name: "TandemSchema", swiftSettings: strict),

        // Macro triad: testable expansion logic, the thin compiler plugin, the runtime (Tandem).
        .target(
            name: "TandemMacrosSupport",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxBuilder", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
            ],
            swiftSettings: strict),
        .macro(
            name: "TandemMacros",
            dependencies: [
                "TandemMacrosSupport",
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
            ],
            swiftSettings: strict),

        // The store: container, context, fetching, predicate → SQL, migrations.
        .target(
            name: "Tandem",
            dependencies: [
                "TandemSchema",
                "TandemMacros",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            swiftSettings: strict),

        // Reads @Model classes from Swift sources (swift-syntax) into a Schema, like the runtime.
        .target(
            name: "TandemSchemaExtract",
            dependencies: [
                "TandemSchema",
                "TandemMacrosSupport",
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftParser", package: "swift-syntax"),
                .product(name: "SwiftParserDiagnostics", package: "swift-syntax"),
            ],
            swiftSettings: strict),

        // The `tandem` command line tool.
        .executableTarget(
            name: "TandemCLI",
            dependencies: [
                "TandemSchema",
                "TandemSchemaExtract",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict),

        .executableTarget(
            name: "TandemDemo",
            dependencies: ["Tandem"],
            path: "Examples/TandemDemo",
            swiftSettings: strict),

        .executableTarget(
            name: "TandemBench",
            dependencies: [
                "Tandem",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            path: "Benchmarks/TandemBench",
            swiftSettings: strict),

        // Writes random changes until killed: the journal's crash test runs it as a process.
        .executableTarget(
            name: "JournalCrashWriter",
            dependencies: ["Tandem"],
            path: "Tests/JournalCrashWriter",
            swiftSettings: strict),

        .testTarget(name: "TandemSchemaTests", dependencies: ["TandemSchema"], swiftSettings: strict),
        .testTarget(
            name: "TandemMacrosTests",
            dependencies: [
                "TandemMacrosSupport",
                .product(name: "SwiftSyntaxMacrosGenericTestSupport", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacroExpansion", package: "swift-syntax"),
            ],
            swiftSettings: strict),
        .testTarget(name: "TandemTests", dependencies: ["Tandem", "TandemSchemaExtract"], swiftSettings: strict),
        .testTarget(name: "TandemSchemaExtractTests", dependencies: ["TandemSchemaExtract", "TandemSchema"], swiftSettings: strict),
    ],
    swiftLanguageModes: [.v6]
)

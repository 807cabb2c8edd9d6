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
        .library(name: "TandemWire", targets: ["TandemWire"]),
        .library(name: "TandemConflicts", targets: ["TandemConflicts"]),
        .library(name: "TandemSync", targets: ["TandemSync"]),
        // An app's transport (Apple platforms; FoundationNetworking on Linux). An app depends
        // on Tandem, TandemSync and TandemURLSession, nothing Linux-only
        // (Scripts/check-app-dependencies.py checks it).
        .library(name: "TandemURLSession", targets: ["TandemURLSession"]),
        // The CLI's and the daemon's transport on Linux: libcurl.
        .library(name: "TandemCurl", targets: ["TandemCurl"]),
        .executable(name: "tandem", targets: ["TandemCLI"]),
        // For the server (the Server/ package), not for apps: the SQLite binding, the WAL
        // checkpointer and gzip it shares with the sync engine, and the fixtures its
        // client-and-server tests share with this package's tests.
        .library(name: "TandemSQLite", targets: ["TandemSQLite"]),
        .library(name: "TandemWAL", targets: ["TandemWAL"]),
        .library(name: "TandemGzip", targets: ["TandemGzip"]),
        .library(name: "TandemSchemaTestSupport", targets: ["TandemSchemaTestSupport"]),
        .library(name: "TandemSyncTestSupport", targets: ["TandemSyncTestSupport"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/swiftlang/swift-syntax", from: "603.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
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
                "TandemWAL",
                "TandemLocking",
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

        // No I/O: the lock Tandem's shared state uses (a pthread mutex ThreadSanitizer sees).
        .target(name: "TandemLocking", swiftSettings: strict),

        // WAL checkpoints on a thread of their own, off the writing connection: the store's
        // and the server's.
        .target(
            name: "TandemWAL",
            dependencies: [
                "TandemLocking",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            swiftSettings: strict),

        // The system's zlib (gzip bodies on the wire), and the small Swift API over it.
        .systemLibrary(name: "CZlib", path: "Sources/CZlib", providers: [.apt(["zlib1g-dev"])]),
        .target(name: "TandemGzip", dependencies: ["CZlib"], swiftSettings: strict),

        // Protocol v1: Codable + Sendable wire types shared by the sync client and the server.
        .target(name: "TandemWire", dependencies: ["TandemSchema"], swiftSettings: strict),

        // Statements bound straight to SQLite's C API, run through GRDB: shared by the sync
        // engine's pull and the server's push, where `StatementArguments` cost more than SQLite.
        .target(
            name: "TandemSQLite",
            dependencies: [
                "TandemWire",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            swiftSettings: strict),

        // The sync engine: Transport protocol, push/pull, conflict handling. No network code.
        .target(
            name: "TandemSync",
            dependencies: [
                "Tandem", "TandemSchema", "TandemWire", "TandemSQLite", "TandemConflicts", "TandemLocking",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),

        // libcurl (system library + a shim for the variadic setopt) and the live transport.
        .systemLibrary(name: "CCurl", path: "Sources/CCurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .target(name: "TandemCurl", dependencies: ["CCurl", "TandemSync", "TandemGzip"], swiftSettings: strict),
        // URLSession (FoundationNetworking on Linux) and the apps' transport.
        .target(name: "TandemURLSession", dependencies: ["TandemSync", "TandemGzip", "TandemLocking"], swiftSettings: strict),

        // No I/O: the conflict core both sides decide with (a record's state and how a change
        // merges into it, the rules the conflict log names).
        .target(name: "TandemConflicts", dependencies: ["TandemSchema", "TandemWire"], swiftSettings: strict),
        .testTarget(
            name: "TandemConflictsTests",
            dependencies: ["TandemConflicts", "TandemWire", "TandemSchema", .product(name: "PropertyBased", package: "swift-property-based")],
            swiftSettings: strict),

        // The `tandem` command line tool.
        .executableTarget(
            name: "TandemCLI",
            dependencies: [
                "TandemSchema",
                "TandemSchemaExtract",
                "Tandem", "TandemWire", "TandemSync", "TandemCurl", "TandemLocking", "TandemSQLite",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict),

        .executableTarget(
            name: "TandemDemo",
            dependencies: ["Tandem"],
            path: "Examples/TandemDemo",
            swiftSettings: strict),

        // The README's app: a store synced over URLSessionTransport (its SwiftUI views build on
        // Apple platforms only). Not a product: it is here so the README's code compiles.
        .target(
            name: "TandemAppExample",
            dependencies: ["Tandem", "TandemSync", "TandemURLSession"],
            path: "Examples/TandemApp",
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

        .executableTarget(
            name: "SyncBench",
            dependencies: [
                "Tandem", "TandemSchema", "TandemSync", "TandemCurl", "TandemURLSession",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/SyncBench",
            swiftSettings: strict),

        // Live sync's latency with two daemons, and idle waiting pulls' cost on the server
        // (Scripts/bench-live.sh).
        .executableTarget(
            name: "LiveBench",
            dependencies: [
                "Tandem", "TandemSchema",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Benchmarks/LiveBench",
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
        .testTarget(name: "TandemTests", dependencies: ["Tandem", "TandemSchemaExtract", "TandemWAL", "TandemLocking"], swiftSettings: strict),
        // One v1/v2 Swift source pair per compatibility rule, shared by two test targets.
        .target(name: "TandemSchemaTestSupport", dependencies: ["TandemSchema"], path: "Tests/TandemSchemaTestSupport", swiftSettings: strict),
        .testTarget(name: "TandemSchemaExtractTests", dependencies: ["TandemSchemaExtract", "TandemSchema", "TandemSchemaTestSupport"], swiftSettings: strict),
        // Stores from a schema alone, for the sync engine's tests here and in Server/.
        .target(
            name: "TandemSyncTestSupport",
            dependencies: ["Tandem", "TandemSchema", "TandemSync", "TandemWire", .product(name: "GRDB", package: "GRDB.swift")],
            path: "Tests/TandemSyncTestSupport",
            swiftSettings: strict),
        // The engine alone (in-memory transports); its tests with a real server are Server/'s.
        .testTarget(
            name: "TandemSyncTests",
            dependencies: [
                "TandemSync", "TandemCurl", "TandemURLSession", "Tandem", "TandemSchema", "TandemWire", "TandemSyncTestSupport",
                "TandemLocking",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strict),
    ],
    swiftLanguageModes: [.v6]
)
